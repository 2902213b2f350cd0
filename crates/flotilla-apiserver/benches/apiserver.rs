//! Issue 3's speed and size figures: durable creates/s with 1 and 8 clients, watch delivery latency with
//! 100 watchers, list of 10,000 objects, resident memory with 10,000 ConfigMaps.
//! Run: `cargo bench -p flotilla-apiserver --bench apiserver` (figures go into docs/BENCHMARKS.md).
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use kube::{Client, Config};
use serde_json::json;

use flotilla_apiserver::{Server, ServerConfig};

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kb / 1024.0
}

fn cm(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": {"bench": "yes"}}, "data": {"key": "value-of-some-length-0123456789"}})).unwrap()
}

async fn creates(api: &Api<ConfigMap>, prefix: &str, clients: usize, per_client: usize) -> f64 {
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
    (clients * per_client) as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir_in(std::env::var("FLOTILLA_BENCH_DIR").unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../target").into())).unwrap();
        let rss0 = rss_mib();
        let server = Server::start(ServerConfig::new("127.0.0.1:0".parse().unwrap(), dir.path())).await.unwrap();
        let kc: kube::config::Kubeconfig = serde_yaml::from_str(&server.kubeconfig("bench")).unwrap();
        let client = Client::try_from(Config::from_custom_kubeconfig(kc, &Default::default()).await.unwrap()).unwrap();
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");

        let one = creates(&api, "one", 1, 1000).await;
        println!("durable creates/s, 1 client:  {one:.0}");
        let eight = creates(&api, "eight", 8, 1000).await;
        println!("durable creates/s, 8 clients: {eight:.0}");
        // Fill up to 10,000 ConfigMaps for the list and memory figures.
        creates(&api, "fill", 8, 125).await;
        let start = Instant::now();
        let list = api.list(&ListParams::default()).await.unwrap();
        println!("list of {} objects: {:.1} ms", list.items.len(), start.elapsed().as_secs_f64() * 1000.0);
        drop(list);
        println!("resident memory with 10,000 ConfigMaps (server and bench client, one process): {:.1} MiB (baseline {rss0:.1} MiB)", rss_mib());

        // Watch delivery latency: 100 watchers, each event's latency measured from just before the create.
        let rv = api.list(&ListParams::default().limit(1)).await.unwrap().metadata.resource_version.unwrap();
        let sent = Arc::new(std::sync::Mutex::new(std::collections::HashMap::<String, Instant>::new()));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Duration>();
        let watch_api: Api<ConfigMap> = Api::namespaced(client.clone(), "bench-watch");
        let ns: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
        ns.create(&PostParams::default(), &serde_json::from_value(json!({"metadata": {"name": "bench-watch"}})).unwrap()).await.unwrap();
        let events = 100;
        for _ in 0..100 {
            let (api, sent, tx, rv) = (watch_api.clone(), sent.clone(), tx.clone(), rv.clone());
            tokio::spawn(async move {
                let mut s = api.watch(&WatchParams::default(), &rv).await.unwrap().boxed();
                let mut n = 0;
                while let Some(Ok(ev)) = s.next().await {
                    if let WatchEvent::Added(o) = ev {
                        let name = o.metadata.name.unwrap_or_default();
                        if let Some(t) = sent.lock().unwrap().get(&name) {
                            let _ = tx.send(t.elapsed());
                        }
                        n += 1;
                        if n == events {
                            return;
                        }
                    }
                }
            });
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        for i in 0..events {
            let name = format!("w-{i}");
            sent.lock().unwrap().insert(name.clone(), Instant::now());
            watch_api.create(&PostParams::default(), &cm(&name)).await.unwrap();
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        drop(tx);
        let mut lat = Vec::new();
        while let Some(d) = rx.recv().await {
            lat.push(d);
        }
        lat.sort();
        let pct = |p: f64| lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1))).copied().unwrap_or_default();
        println!(
            "watch delivery latency, 100 watchers, {} deliveries: p50 {:.2} ms, p99 {:.2} ms (create start to event decoded)",
            lat.len(),
            pct(0.50).as_secs_f64() * 1000.0,
            pct(0.99).as_secs_f64() * 1000.0
        );
        server.shutdown().await;
    });
}
