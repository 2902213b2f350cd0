//! Changing a JSON watch stream as it flows: kube-apiserver writes one event per line, so each complete line
//! is changed and passed on at once; a line split across chunks waits for its end. A line that is not JSON
//! passes unchanged.

use bytes::Bytes;
use futures::{Stream, StreamExt};
use serde_json::Value;

/// `input` with `change` applied to every line's event, in order.
pub(crate) fn change_lines<S, E, F>(
    input: S,
    change: F,
) -> impl Stream<Item = Result<Bytes, E>> + Send
where
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin,
    E: Send,
    F: FnMut(&mut Value) + Send,
{
    futures::stream::unfold(
        (input, Vec::new(), false, change),
        move |(mut input, mut pending, done, mut change)| async move {
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
                        let out = change_complete(&pending, &mut change);
                        return Some((Ok(out), (input, rest, false, change)));
                    }
                    Some(Err(error)) => return Some((Err(error), (input, pending, true, change))),
                    None if pending.is_empty() => return None,
                    None => {
                        let out = change_line(&pending, &mut change);
                        return Some((Ok(out.into()), (input, Vec::new(), true, change)));
                    }
                }
            }
        },
    )
}

/// Changes newline-terminated lines.
fn change_complete(lines: &[u8], change: &mut impl FnMut(&mut Value)) -> Bytes {
    let mut out = Vec::with_capacity(lines.len() + 16);
    for line in lines.split_inclusive(|b| *b == b'\n') {
        let content = line.strip_suffix(b"\n").unwrap_or(line);
        out.extend_from_slice(&change_line(content, change));
        out.push(b'\n');
    }
    out.into()
}

/// One line, changed when it is JSON.
fn change_line(line: &[u8], change: &mut impl FnMut(&mut Value)) -> Vec<u8> {
    match serde_json::from_slice::<Value>(line) {
        Ok(mut value) => {
            change(&mut value);
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
    use crate::storage::rewrite::{Direction, rewrite};

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
        change_lines(input, |event| rewrite(event, Direction::ToServed))
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

    #[tokio::test]
    async fn the_change_keeps_its_state_across_chunks() {
        let a = event("ADDED", "cluster.karmada.io/storage", "a");
        let (a1, a2) = a.split_at(10);
        let chunks = [a1.to_owned(), format!("{a2}\n{a}\n"), format!("{a}\n")];
        let input = stream::iter(chunks.map(|c| Ok::<_, Infallible>(Bytes::from(c))));
        let mut seen = 0;
        let out: Vec<String> = change_lines(input, move |event| {
            seen += 1;
            event["seen"] = json!(seen);
        })
        .map(|chunk| String::from_utf8_lossy(&chunk.unwrap_or_default()).into_owned())
        .collect()
        .await;
        let numbers: Vec<Value> = out
            .concat()
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .map(|event| event["seen"].clone())
            .collect();
        assert_eq!(numbers, [json!(1), json!(2), json!(3)]);
    }
}
