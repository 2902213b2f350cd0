//! Issue 3's speed and size figures: durable creates/s with 1 and 8 clients, watch delivery latency with
//! 100 watchers, list of 10,000 objects, resident memory with 10,000 ConfigMaps; with the disk's own flush
//! latency measured alongside, since it bounds acknowledged writes.
//! Run: `cargo bench -p flotilla-apiserver --bench apiserver` (figures go into docs/BENCHMARKS.md).
//! `FLOTILLA_BENCH_DIR` picks the directory for the store (default: `target/`).
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use kube::{Client, Config};
use serde_json::json;

use flotilla_apiserver::{Server, ServerConfig};
use flotilla_store::Store;

/// Resident memory of a process (`self` or a pid), MiB.
fn rss_mib(pid: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kb / 1024.0
}

/// Median of 200 rewrites of one 4 KiB block followed by `fdatasync`, in a preallocated file: the cost of one
/// flush on this disk right now, i.e. the floor under one acknowledged commit.
fn fdatasync_ms(dir: &Path) -> f64 {
    let path = dir.join("fdatasync-probe");
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(&vec![0u8; 1 << 20]).unwrap();
    f.sync_all().unwrap();
    let block = [7u8; 4096];
    let mut times: Vec<f64> = (0..200u64)
        .map(|i| {
            let t = Instant::now();
            f.write_all_at(&block, (i % 256) * 4096).unwrap();
            f.sync_data().unwrap();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    let _ = std::fs::remove_file(&path);
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn cm(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": {"bench": "yes"}}, "data": {"key": "value-of-some-length-0123456789"}})).unwrap()
}

/// Creates `clients × per_client` ConfigMaps, each client waiting for its acknowledgement before the next;
/// returns creates/s and the average number of writes per commit.
async fn creates(
    api: &Api<ConfigMap>,
    store: &Store,
    prefix: &str,
    clients: usize,
    per_client: usize,
) -> (f64, f64, f64) {
    let stats = store.commit_stats();
    let (c0, w0, m0) = (
        stats.commits.load(Ordering::Relaxed),
        stats.writes.load(Ordering::Relaxed),
        stats.commit_micros.load(Ordering::Relaxed),
    );
    let start = Instant::now();
    let mut handles = Vec::new();
    for c in 0..clients {
        let api = api.clone();
        let prefix = prefix.to_string();
        handles.push(tokio::spawn(async move {
            for i in 0..per_client {
                api.create(&PostParams::default(), &cm(&format!("{prefix}-{c}-{i}")))
                    .await
                    .unwrap();
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    let rate = (clients * per_client) as f64 / start.elapsed().as_secs_f64();
    let commits = (stats.commits.load(Ordering::Relaxed) - c0).max(1) as f64;
    let writes = (stats.writes.load(Ordering::Relaxed) - w0) as f64;
    let micros = (stats.commit_micros.load(Ordering::Relaxed) - m0) as f64;
    (rate, writes / commits, micros / commits / 1000.0)
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 * p) as usize).min(sorted.len().saturating_sub(1));
    sorted.get(i).copied().unwrap_or_default().as_secs_f64() * 1000.0
}

/// 100 watchers on one namespace, 100 creates 10 ms apart: latency of each delivery from the create's
/// request start and from its commit (the moment the committed event is published, just before the
/// acknowledgement goes out).
async fn watch_latency(client: &Client, store: &Store) {
    let watch_api: Api<ConfigMap> = Api::namespaced(client.clone(), "bench-watch");
    let ns: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    ns.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "bench-watch"}})).unwrap(),
    )
    .await
    .unwrap();
    let rv = watch_api
        .list(&ListParams::default().limit(1))
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let started: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let committed: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    {
        let mut events = store.hub().subscribe_all();
        let committed = committed.clone();
        tokio::spawn(async move {
            while let Ok(ev) = events.recv().await {
                let meta = ev.object.get("metadata");
                let field = |k: &str| meta.and_then(|m| m.get(k)).and_then(|v| v.as_str());
                if field("namespace") == Some("bench-watch")
                    && let Some(name) = field("name")
                {
                    committed
                        .lock()
                        .unwrap()
                        .insert(name.to_string(), Instant::now());
                }
            }
        });
    }
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(String, Instant)>();
    let events = 100;
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel::<()>(100);
    for _ in 0..100 {
        let (api, tx, rv, ready) = (watch_api.clone(), tx.clone(), rv.clone(), ready_tx.clone());
        tokio::spawn(async move {
            let mut s = api
                .watch(&WatchParams::default(), &rv)
                .await
                .unwrap()
                .boxed();
            let _ = ready.send(()).await;
            let mut n = 0;
            while let Some(Ok(ev)) = s.next().await {
                if let WatchEvent::Added(o) = ev {
                    let _ = tx.send((o.metadata.name.unwrap_or_default(), Instant::now()));
                    n += 1;
                    if n == events {
                        return;
                    }
                }
            }
        });
    }
    drop(tx);
    for _ in 0..100 {
        ready_rx.recv().await.unwrap();
    }
    for i in 0..events {
        let name = format!("w-{i}");
        started.lock().unwrap().insert(name.clone(), Instant::now());
        watch_api
            .create(&PostParams::default(), &cm(&name))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut from_start = Vec::new();
    let mut from_commit = Vec::new();
    while let Some((name, at)) = rx.recv().await {
        if let Some(t) = started.lock().unwrap().get(&name) {
            from_start.push(at.duration_since(*t));
        }
        if let Some(t) = committed.lock().unwrap().get(&name) {
            from_commit.push(at.saturating_duration_since(*t));
        }
    }
    from_start.sort();
    from_commit.sort();
    println!(
        "watch delivery, 100 watchers, {} deliveries: from commit p50 {:.2} ms, p99 {:.2} ms; from request start p50 {:.2} ms, p99 {:.2} ms",
        from_commit.len(),
        pct(&from_commit, 0.50),
        pct(&from_commit, 0.99),
        pct(&from_start, 0.50),
        pct(&from_start, 0.99),
    );
}

/// Child mode: serve from `dir` until stdin closes (the parent measures this process's memory alone).
fn serve_child(dir: &str) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let server = Server::start(ServerConfig::new("127.0.0.1:0".parse().unwrap(), dir))
            .await
            .unwrap();
        let kubeconfig = Path::new(dir).join("kubeconfig");
        std::fs::write(&kubeconfig, server.kubeconfig("bench")).unwrap();
        println!("ready");
        tokio::task::spawn_blocking(|| {
            let mut sink = String::new();
            let _ = std::io::stdin().read_line(&mut sink);
        })
        .await
        .unwrap();
        server.shutdown().await;
    });
}

async fn client_from(kubeconfig: &str) -> Client {
    let kc: kube::config::Kubeconfig = flotilla_yaml::from_str(kubeconfig).unwrap();
    Client::try_from(
        Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap(),
    )
    .unwrap()
}

/// The server alone in a child process: 10,000 ConfigMaps, its resident memory, and a list of all of them.
async fn memory_and_list(base: &Path) {
    let dir = tempfile::tempdir_in(base).unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .env("FLOTILLA_BENCH_SERVE", dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut ready,
    )
    .unwrap();
    assert_eq!(ready.trim(), "ready");
    let pid = child.id().to_string();
    let kubeconfig = std::fs::read_to_string(dir.path().join("kubeconfig")).unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client_from(&kubeconfig).await, "default");
    let empty = rss_mib(&pid);
    let mut handles = Vec::new();
    for c in 0..8 {
        let api = api.clone();
        handles.push(tokio::spawn(async move {
            for i in 0..1250 {
                api.create(&PostParams::default(), &cm(&format!("fill-{c}-{i}")))
                    .await
                    .unwrap();
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    let stored = rss_mib(&pid);
    let start = Instant::now();
    let list = api.list(&ListParams::default()).await.unwrap();
    println!(
        "list of {} objects: {:.1} ms",
        list.items.len(),
        start.elapsed().as_secs_f64() * 1000.0
    );
    println!(
        "server resident memory (own process): {empty:.1} MiB empty, {stored:.1} MiB with 10,000 ConfigMaps, {:.1} MiB after listing them",
        rss_mib(&pid)
    );
    drop(child.stdin.take());
    let _ = child.wait();
}

fn main() {
    if let Ok(dir) = std::env::var("FLOTILLA_BENCH_SERVE") {
        serve_child(&dir);
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let base = std::env::var("FLOTILLA_BENCH_DIR")
            .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../target").into());
        let base = Path::new(&base);
        let dir = tempfile::tempdir_in(base).unwrap();
        println!(
            "disk: 4 KiB rewrite + fdatasync, median of 200: {:.2} ms",
            fdatasync_ms(dir.path())
        );
        let server = Server::start(ServerConfig::new(
            "127.0.0.1:0".parse().unwrap(),
            dir.path(),
        ))
        .await
        .unwrap();
        let store = server.store().clone();
        let client = client_from(&server.kubeconfig("bench")).await;
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        for (label, prefix, clients) in [("1 client", "one", 1), ("8 clients", "eight", 8)] {
            let (rate, batch, commit_ms) = creates(&api, &store, prefix, clients, 1000).await;
            println!(
                "durable creates/s, {label}: {rate:.0} ({batch:.1} writes per commit, {commit_ms:.2} ms per commit)"
            );
        }
        watch_latency(&client, &store).await;
        server.shutdown().await;
        memory_and_list(base).await;
    });
}
