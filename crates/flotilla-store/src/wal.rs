//! The write-ahead log: what makes a write durable before redb has it.
//!
//! A batch of writes becomes one record appended to the current segment file followed by one `fdatasync`,
//! which is the whole durability cost of an acknowledged write. redb is brought up to date from the log in
//! the background (see `disk`), a segment at a time, and a segment file is deleted only once redb has
//! committed everything in it durably. At start every remaining segment is replayed on top of redb.
//!
//! Record layout (little endian): `len: u32`, `checksum: u64` (FNV-1a of the payload), then the payload:
//! `rv: u64`, `count: u32`, and `count` operations, each `tag: u8` (1 put, 2 delete), `key_len: u32`, key
//! bytes and, for puts, `value_len: u32` and the object's JSON. A record cut short by a crash (its `fdatasync`
//! never returned, so nothing in it was acknowledged) ends the log; damage anywhere else is an error.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// One logged change: a key and its new object JSON (`None`: deleted).
pub type LoggedOp = (String, Option<Vec<u8>>);

/// A replayed record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The highest resourceVersion of the batch.
    pub rv: u64,
    /// Its changes, in resourceVersion order.
    pub ops: Vec<LoggedOp>,
}

const PUT: u8 = 1;
const DELETE: u8 = 2;
const HEADER: usize = 12;

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn len32(n: usize) -> std::io::Result<[u8; 4]> {
    u32::try_from(n)
        .map(u32::to_le_bytes)
        .map_err(|_| std::io::Error::other("a logged object is larger than 4 GiB"))
}

/// Appends one record for `rv` and `ops` to `buf`.
///
/// # Errors
/// When a key or object exceeds 4 GiB.
pub fn encode<'a>(
    buf: &mut Vec<u8>,
    rv: u64,
    ops: impl ExactSizeIterator<Item = (&'a str, Option<&'a [u8]>)>,
) -> std::io::Result<()> {
    let start = buf.len();
    buf.extend_from_slice(&[0; HEADER]);
    buf.extend_from_slice(&rv.to_le_bytes());
    buf.extend_from_slice(&len32(ops.len())?);
    for (key, value) in ops {
        buf.push(if value.is_some() { PUT } else { DELETE });
        buf.extend_from_slice(&len32(key.len())?);
        buf.extend_from_slice(key.as_bytes());
        if let Some(v) = value {
            buf.extend_from_slice(&len32(v.len())?);
            buf.extend_from_slice(v);
        }
    }
    let payload = &buf[start + HEADER..];
    let (len, sum) = (len32(payload.len())?, fnv1a(payload).to_le_bytes());
    buf[start..start + 4].copy_from_slice(&len);
    buf[start + 4..start + HEADER].copy_from_slice(&sum);
    Ok(())
}

struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<usize> {
        let b: [u8; 4] = self.take(4)?.try_into().ok()?;
        usize::try_from(u32::from_le_bytes(b)).ok()
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

fn decode_payload(payload: &[u8]) -> Option<Record> {
    let mut c = Cursor(payload);
    let rv = c.u64()?;
    let count = c.u32()?;
    let mut ops = Vec::with_capacity(count.min(65536));
    for _ in 0..count {
        let tag = c.take(1)?[0];
        let klen = c.u32()?;
        let key = String::from_utf8(c.take(klen)?.to_vec()).ok()?;
        let value = match tag {
            PUT => {
                let vlen = c.u32()?;
                Some(c.take(vlen)?.to_vec())
            }
            DELETE => None,
            _ => return None,
        };
        ops.push((key, value));
    }
    c.0.is_empty().then_some(Record { rv, ops })
}

/// What reading one segment found.
pub struct Segment {
    /// Its complete records, in order.
    pub records: Vec<Record>,
    /// Whether it ended in a record cut short (a crash during its write) rather than cleanly.
    pub torn: bool,
}

/// Reads a segment's records.
///
/// # Errors
/// When the file cannot be read.
pub fn read(path: &Path) -> std::io::Result<Segment> {
    let mut bytes = Vec::new();
    File::open(path)?.read_to_end(&mut bytes)?;
    let mut c = Cursor(&bytes);
    let mut records = Vec::new();
    while !c.0.is_empty() {
        let record = (|| {
            let len = c.u32()?;
            let sum = c.u64()?;
            let payload = c.take(len)?;
            (fnv1a(payload) == sum).then(|| decode_payload(payload))?
        })();
        match record {
            Some(r) => records.push(r),
            None => {
                return Ok(Segment {
                    records,
                    torn: true,
                });
            }
        }
    }
    Ok(Segment {
        records,
        torn: false,
    })
}

/// The segment files in `dir`, oldest first, with their sequence numbers.
///
/// # Errors
/// When the directory cannot be listed.
pub fn segments(dir: &Path) -> std::io::Result<Vec<(u64, PathBuf)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let seq = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("wal-"))
            .and_then(|n| n.strip_suffix(".log"))
            .and_then(|n| n.parse::<u64>().ok());
        if let Some(seq) = seq {
            out.push((seq, path));
        }
    }
    out.sort();
    Ok(out)
}

/// The path of segment `seq`.
pub fn segment_path(dir: &Path, seq: u64) -> PathBuf {
    dir.join(format!("wal-{seq:012}.log"))
}

/// Makes a directory's entries (a created or removed segment) durable.
///
/// # Errors
/// When the directory cannot be opened or synced.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// The segment being appended to.
pub struct Writer {
    file: File,
    /// Sequence number of the segment.
    pub seq: u64,
    /// Bytes written so far.
    pub bytes: u64,
}

impl Writer {
    /// Creates segment `seq` in `dir` (its directory entry durable before anything is logged in it).
    ///
    /// # Errors
    /// When the file cannot be created or the directory synced.
    pub fn create(dir: &Path, seq: u64) -> std::io::Result<Self> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(segment_path(dir, seq))?;
        sync_dir(dir)?;
        Ok(Self {
            file,
            seq,
            bytes: 0,
        })
    }

    /// Appends encoded records and waits until they are on disk.
    ///
    /// # Errors
    /// When the write or the flush fails; nothing in `buf` may then be acknowledged.
    pub fn append(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.file.write_all(buf)?;
        self.file.sync_data()?;
        self.bytes += buf.len() as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_a_torn_tail_ends_the_log() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut w = Writer::create(dir.path(), 7).expect("create");
        let mut buf = Vec::new();
        encode(
            &mut buf,
            5,
            [("a", Some(&b"{}"[..])), ("b", None)].into_iter(),
        )
        .expect("encode");
        encode(&mut buf, 6, [("c", Some(&b"[1]"[..]))].into_iter()).expect("encode");
        w.append(&buf).expect("append");
        let mut torn = Vec::new();
        encode(&mut torn, 7, [("d", Some(&b"{}"[..]))].into_iter()).expect("encode");
        w.append(&torn[..torn.len() - 3]).expect("append");
        let seg = read(&segment_path(dir.path(), 7)).expect("read");
        assert!(seg.torn);
        assert_eq!(
            seg.records,
            vec![
                Record {
                    rv: 5,
                    ops: vec![("a".into(), Some(b"{}".to_vec())), ("b".into(), None)]
                },
                Record {
                    rv: 6,
                    ops: vec![("c".into(), Some(b"[1]".to_vec()))]
                },
            ]
        );
        assert_eq!(
            segments(dir.path()).expect("list"),
            vec![(7, segment_path(dir.path(), 7))]
        );
    }

    #[test]
    fn a_flipped_byte_is_detected() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut buf = Vec::new();
        encode(&mut buf, 1, [("k", Some(&b"{\"a\":1}"[..]))].into_iter()).expect("encode");
        let last = buf.len() - 2;
        buf[last] ^= 0xff;
        let path = segment_path(dir.path(), 1);
        std::fs::write(&path, &buf).expect("write");
        let seg = read(&path).expect("read");
        assert!(seg.torn && seg.records.is_empty());
    }
}
