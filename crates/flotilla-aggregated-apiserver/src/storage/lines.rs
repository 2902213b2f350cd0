//! Rewriting a JSON watch stream as it flows: kube-apiserver writes one event per line, so each complete line
//! is rewritten and passed on at once; a line split across chunks waits for its end. A line that is not JSON
//! passes unchanged.

use bytes::Bytes;
use futures::{Stream, StreamExt};
use serde_json::Value;

use super::rewrite::{Direction, rewrite};

/// `input` with every line's `apiVersion`s rewritten in `direction`.
pub(crate) fn rewrite_lines<S, E>(
    input: S,
    direction: Direction,
) -> impl Stream<Item = Result<Bytes, E>> + Send
where
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin,
    E: Send,
{
    futures::stream::unfold(
        (input, Vec::new(), false),
        move |(mut input, mut pending, done)| async move {
            if done {
                return None;
            }
            loop {
                match input.next().await {
                    Some(Ok(chunk)) => {
                        pending.extend_from_slice(&chunk);
                        let Some(end) = pending.iter().rposition(|b| *b == b'\n') else {
                            continue;
                        };
                        let rest = pending.split_off(end + 1);
                        let out = rewrite_complete(&pending, direction);
                        return Some((Ok(out), (input, rest, false)));
                    }
                    Some(Err(error)) => return Some((Err(error), (input, pending, true))),
                    None if pending.is_empty() => return None,
                    None => {
                        let out = rewrite_line(&pending, direction);
                        return Some((Ok(out.into()), (input, Vec::new(), true)));
                    }
                }
            }
        },
    )
}

/// Rewrites newline-terminated lines.
fn rewrite_complete(lines: &[u8], direction: Direction) -> Bytes {
    let mut out = Vec::with_capacity(lines.len() + 16);
    for line in lines.split_inclusive(|b| *b == b'\n') {
        let content = line.strip_suffix(b"\n").unwrap_or(line);
        out.extend_from_slice(&rewrite_line(content, direction));
        out.push(b'\n');
    }
    out.into()
}

/// One line, rewritten when it is JSON.
fn rewrite_line(line: &[u8], direction: Direction) -> Vec<u8> {
    match serde_json::from_slice::<Value>(line) {
        Ok(mut value) => {
            rewrite(&mut value, direction);
            serde_json::to_vec(&value).unwrap_or_else(|_| line.to_vec())
        }
        Err(_) => line.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use futures::stream;
    use serde_json::json;

    use super::*;

    fn event(kind: &str, version: &str, name: &str) -> String {
        json!({"type": kind, "object": {"apiVersion": version, "kind": "Cluster", "metadata": {"name": name}}})
            .to_string()
    }

    async fn collect(chunks: Vec<&str>) -> Vec<String> {
        let input = stream::iter(
            chunks
                .into_iter()
                .map(|c| Ok::<_, Infallible>(Bytes::from(c.to_owned())))
                .collect::<Vec<_>>(),
        );
        rewrite_lines(input, Direction::ToServed)
            .map(|chunk| String::from_utf8_lossy(&chunk.unwrap_or_default()).into_owned())
            .collect()
            .await
    }

    #[tokio::test]
    async fn each_event_is_rewritten_as_soon_as_its_line_ends() {
        let a = event("ADDED", "cluster.karmada.io/storage", "a");
        let b = event("MODIFIED", "cluster.karmada.io/storage", "b");
        let (b1, b2) = b.split_at(20);
        let both = format!("{a}\n{b1}");
        let tail = format!("{b2}\n");
        let out = collect(vec![&both, &tail]).await;
        assert_eq!(
            out,
            [
                format!("{}\n", event("ADDED", "cluster.karmada.io/v1alpha1", "a")),
                format!(
                    "{}\n",
                    event("MODIFIED", "cluster.karmada.io/v1alpha1", "b")
                ),
            ]
        );
    }

    #[tokio::test]
    async fn several_lines_in_one_chunk_and_a_last_line_without_newline() {
        let a = event("ADDED", "cluster.karmada.io/storage", "a");
        let b = event("DELETED", "cluster.karmada.io/storage", "b");
        let out = collect(vec![&format!("{a}\n{a}\n"), &b]).await;
        let served_a = event("ADDED", "cluster.karmada.io/v1alpha1", "a");
        assert_eq!(
            out,
            [
                format!("{served_a}\n{served_a}\n"),
                event("DELETED", "cluster.karmada.io/v1alpha1", "b"),
            ]
        );
    }

    #[tokio::test]
    async fn lines_that_are_not_json_pass_unchanged() {
        let out = collect(vec!["not json\n", "\n"]).await;
        assert_eq!(out, ["not json\n", "\n"]);
    }
}
