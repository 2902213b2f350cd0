//! Counts the control plane's writes per resource during a run (one watch per resource; every ADDED or
//! MODIFIED event is one write), so a slow run says which objects its writes went to.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures::TryStreamExt;
use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::watcher;
use tokio::task::JoinHandle;

/// The resources counted: (group, version, kind, plural). Events are counted once, through core v1: as in
/// kube-apiserver, events.k8s.io/v1 is another view of the same objects.
const RESOURCES: [(&str, &str, &str, &str); 6] = [
    ("apps", "v1", "Deployment", "deployments"),
    (
        "work.karmada.io",
        "v1alpha2",
        "ResourceBinding",
        "resourcebindings",
    ),
    ("work.karmada.io", "v1alpha1", "Work", "works"),
    ("", "v1", "Event", "events"),
    ("cluster.karmada.io", "v1alpha1", "Cluster", "clusters"),
    ("coordination.k8s.io", "v1", "Lease", "leases"),
];

/// Running counters.
pub struct Census {
    counts: Arc<Mutex<BTreeMap<String, u64>>>,
    tasks: Vec<JoinHandle<()>>,
}

impl Census {
    /// Starts one watch per resource of [`RESOURCES`]; objects that exist already count once.
    pub fn start(client: &kube::Client) -> Census {
        let counts = Arc::new(Mutex::new(BTreeMap::new()));
        let tasks = RESOURCES
            .iter()
            .map(|(group, version, kind, plural)| {
                let resource = ApiResource::from_gvk_with_plural(
                    &GroupVersionKind::gvk(group, version, kind),
                    plural,
                );
                let label = if group.is_empty() {
                    (*plural).to_string()
                } else {
                    format!("{plural}.{group}")
                };
                let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
                let counts = counts.clone();
                tokio::spawn(async move {
                    let stream = watcher::watcher(api, watcher::Config::default());
                    let mut stream = std::pin::pin!(stream);
                    while let Ok(Some(event)) = stream.try_next().await {
                        if let watcher::Event::Apply(_) | watcher::Event::InitApply(_) = event {
                            *counts
                                .lock()
                                .unwrap_or_else(PoisonError::into_inner)
                                .entry(label.clone())
                                .or_insert(0) += 1;
                        }
                    }
                })
            })
            .collect();
        Census { counts, tasks }
    }

    /// Stops counting and returns the writes per resource.
    pub fn finish(self) -> BTreeMap<String, u64> {
        for task in &self.tasks {
            task.abort();
        }
        self.counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
