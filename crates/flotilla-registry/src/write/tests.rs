use super::*;
use flotilla_store::Store;
use serde_json::json;

fn cm(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}")}, "data": {"k": value}})
}

fn configmaps() -> ResKey {
    ResKey::new("", "configmaps")
}

#[tokio::test]
async fn preparation_errors_and_dry_run_change_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    let res = configmaps();
    let e = guaranteed_update(&store, &res, "default", "a", false, |_| {
        Err(ApiError::bad_request("no"))
    })
    .await;
    assert!(e.is_err());
    let w = guaranteed_update(&store, &res, "default", "a", true, |_| {
        Ok(Outcome::Put(cm("a", "1")))
    })
    .await
    .expect("dry run");
    assert!(w.object["metadata"].get("resourceVersion").is_none());
    assert_eq!(store.current_rv(), 0);
    assert!(store.get(&res, "default", "a").is_none());
}

/// The preparation may read the store (admission does): nothing is locked while it runs.
#[tokio::test]
async fn preparations_read_the_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    let res = configmaps();
    guaranteed_update(&store, &res, "default", "a", false, |_| {
        Ok(Outcome::Put(cm("a", "1")))
    })
    .await
    .expect("create a");
    let w = guaranteed_update(&store, &res, "default", "b", false, |_| {
        let a = store.get(&res, "default", "a").expect("a is readable");
        Ok(Outcome::Put(cm("b", a["data"]["k"].as_str().unwrap_or(""))))
    })
    .await
    .expect("create b from a");
    assert_eq!(w.object["data"]["k"], "1");
}

/// A write that commits between another write's read and its commit makes the other prepare again from the
/// newer object: both changes survive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conflicting_commit_reruns_the_preparation_on_the_newer_object() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    let res = configmaps();
    guaranteed_update(&store, &res, "default", "a", false, |_| {
        Ok(Outcome::Put(cm("a", "")))
    })
    .await
    .expect("create");
    let mut seen = Vec::new();
    let mut interfered = false;
    let w = guaranteed_update(&store, &res, "default", "a", false, |cur| {
        let cur = cur.expect("exists");
        seen.push(cur["data"]["k"].as_str().unwrap_or("").to_string());
        if !interfered {
            interfered = true;
            // Another writer commits while this preparation runs.
            let mut other = cur.as_ref().clone();
            other["data"]["k"] = json!("other");
            let expect = Expect::of(Some(cur.as_ref()));
            let handle = tokio::runtime::Handle::current();
            let store = &store;
            let res = &res;
            tokio::task::block_in_place(|| {
                handle.block_on(store.commit(res, "default", "a", expect, Change::Put(other)))
            })
            .expect("the other write commits");
        }
        let mut new = cur.as_ref().clone();
        let k = format!("{}+mine", cur["data"]["k"].as_str().unwrap_or(""));
        new["data"]["k"] = json!(k);
        Ok(Outcome::Put(new))
    })
    .await
    .expect("write");
    assert_eq!(seen, ["", "other"]);
    assert_eq!(w.object["data"]["k"], "other+mine");
    assert_eq!(store.current_rv(), 3);
}

/// A preparation that waits (admission webhooks) is driven by `Attempts`: when another write commits between
/// its read and its commit, the commit answers `None` and the next read sees the newer object, so the write is
/// prepared (and admitted) again from it.
#[tokio::test]
async fn attempts_prepare_again_after_a_conflicting_commit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    let res = configmaps();
    guaranteed_update(&store, &res, "default", "a", false, |_| {
        Ok(Outcome::Put(cm("a", "1")))
    })
    .await
    .expect("create");
    let mut attempts = Attempts::start(&store, &res, "default", "a", false).expect("start");
    let mut prepared_from = Vec::new();
    let written = loop {
        let cur = attempts.read().expect("the object exists");
        prepared_from.push(cur["data"]["k"].clone());
        if prepared_from.len() == 1 {
            // Another writer gets in while this preparation waits.
            guaranteed_update(&store, &res, "default", "a", false, |_| {
                Ok(Outcome::Put(cm("a", "2")))
            })
            .await
            .expect("the other write");
        }
        let mut next = cur.as_ref().clone();
        next["data"]["seen"] = cur["data"]["k"].clone();
        if let Some(written) = attempts.commit(Outcome::Put(next)).await.expect("commit") {
            break written;
        }
    };
    assert_eq!(prepared_from, [json!("1"), json!("2")]);
    assert_eq!(written.object["data"], json!({"k": "2", "seen": "2"}));
}
