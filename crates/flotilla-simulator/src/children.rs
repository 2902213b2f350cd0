//! Writes what the Deployment and ReplicaSet controllers own, level-triggered: a Deployment's ReplicaSet for
//! its current template at its replica count (older ones scaled to zero: the simulated rollout completes at
//! once), and a ReplicaSet's Pods, created or deleted until their number matches. Deleting the owner leaves the
//! rest to the API server's garbage collector, as in a real cluster.

use kube::api::{Api, DeleteParams, DynamicObject, ListParams, PostParams};
use kube::core::ApiResource;
use kube::{Client, ResourceExt};
use serde_json::Value;

use super::owned::{
    controlled_by, pod_for, pod_name, replica_set_annotations, replica_set_for, replica_set_name,
    replicas, revision, uid,
};
use super::{Error, FIELD_MANAGER, Kind};

/// What one sync writes through: the client, and the owner's kind and name for errors.
struct Writer<'a> {
    client: &'a Client,
    kind: Kind,
    object: String,
    namespace: &'a str,
}

impl Writer<'_> {
    fn api(&self, kind: Kind) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), self.namespace, &kind.api_resource())
    }

    fn fail(&self, source: kube::Error) -> Error {
        Error::Children {
            kind: self.kind,
            object: self.object.clone(),
            source,
        }
    }

    /// The objects of `kind` controlled by `owner` (its JSON), listed by the owner's `matchLabels` (what it
    /// owns carries them; the list stays small when a namespace holds many owners).
    async fn list(&self, kind: Kind, owner: &Value) -> Result<Vec<DynamicObject>, Error> {
        let labels = owner
            .pointer("/spec/selector/matchLabels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some(format!("{k}={}", v.as_str()?)))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default();
        let params = if labels.is_empty() {
            ListParams::default()
        } else {
            ListParams::default().labels(&labels)
        };
        let owner = uid(owner);
        let all = self
            .api(kind)
            .list(&params)
            .await
            .map_err(|e| self.fail(e))?;
        Ok(all
            .items
            .into_iter()
            .filter(|o| o.metadata.deletion_timestamp.is_none())
            .filter(|o| serde_json::to_value(o).is_ok_and(|v| controlled_by(&v, owner)))
            .collect())
    }

    /// Creates `object`; one that exists already (a concurrent sync made it) is fine.
    async fn create(&self, kind: Kind, object: &Value) -> Result<(), Error> {
        let object: DynamicObject =
            serde_json::from_value(object.clone()).map_err(|source| Error::Encode {
                kind,
                object: self.object.clone(),
                source,
            })?;
        match self.api(kind).create(&post_params(), &object).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
            Err(e) => Err(self.fail(e)),
        }
    }

    async fn replace(&self, kind: Kind, object: &DynamicObject) -> Result<(), Error> {
        self.api(kind)
            .replace(&object.name_any(), &post_params(), object)
            .await
            .map(|_| ())
            .map_err(|e| self.fail(e))
    }
}

fn post_params() -> PostParams {
    PostParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PostParams::default()
    }
}

/// Brings what `object` (of `kind`) owns to what its controller would keep; kinds that own nothing here are
/// left alone.
pub(crate) async fn sync(client: &Client, kind: Kind, object: &Value) -> Result<(), Error> {
    if object.pointer("/metadata/deletionTimestamp").is_some() {
        return Ok(());
    }
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("default");
    let writer = Writer {
        client,
        kind,
        object: format!("{namespace}/{}", super::common::name(object)),
        namespace,
    };
    match kind {
        Kind::Deployment => deployment(&writer, object).await,
        Kind::ReplicaSet => replica_set(&writer, object).await,
        _ => Ok(()),
    }
}

/// The ReplicaSet resource, as children of a Deployment are watched.
pub(crate) fn owned_resource(kind: Kind) -> Option<ApiResource> {
    match kind {
        Kind::Deployment => Some(Kind::ReplicaSet.api_resource()),
        Kind::ReplicaSet => Some(Kind::Pod.api_resource()),
        _ => None,
    }
}

async fn deployment(writer: &Writer<'_>, deployment: &Value) -> Result<(), Error> {
    let owned = writer.list(Kind::ReplicaSet, deployment).await?;
    let current = replica_set_name(deployment);
    let want = replicas(deployment);
    let latest_revision = owned
        .iter()
        .filter_map(|rs| serde_json::to_value(rs).ok())
        .map(|rs| revision(&rs))
        .max()
        .unwrap_or(0);
    let mut found = false;
    for rs in &owned {
        let value = serde_json::to_value(rs).unwrap_or_default();
        let is_current = rs.name_any() == current;
        found |= is_current;
        let (replicas_wanted, annotations) = if is_current {
            (
                want,
                Some(replica_set_annotations(deployment, revision(&value))),
            )
        } else {
            (0, None)
        };
        let annotated = annotations.as_ref().is_none_or(|wanted| {
            wanted.iter().all(|(k, v)| {
                value
                    .pointer("/metadata/annotations")
                    .and_then(|a| a.get(k))
                    == Some(v)
            })
        });
        if replicas(&value) == replicas_wanted && annotated {
            continue;
        }
        let mut updated = rs.clone();
        if let Some(spec) = updated.data.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("replicas".into(), replicas_wanted.into());
        }
        if let Some(annotations) = annotations {
            updated
                .metadata
                .annotations
                .get_or_insert_with(Default::default)
                .extend(
                    annotations
                        .into_iter()
                        .filter_map(|(k, v)| Some((k, v.as_str()?.to_owned()))),
                );
        }
        writer.replace(Kind::ReplicaSet, &updated).await?;
    }
    if !found {
        let rs = replica_set_for(deployment, latest_revision + 1);
        writer.create(Kind::ReplicaSet, &rs).await?;
    }
    Ok(())
}

async fn replica_set(writer: &Writer<'_>, replica_set: &Value) -> Result<(), Error> {
    let pods = writer.list(Kind::Pod, replica_set).await?;
    let want = usize::try_from(replicas(replica_set)).unwrap_or(0);
    if pods.len() > want {
        let mut names: Vec<String> = pods.iter().map(ResourceExt::name_any).collect();
        names.sort_unstable();
        for name in names.into_iter().skip(want) {
            match writer
                .api(Kind::Pod)
                .delete(&name, &DeleteParams::default())
                .await
            {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(e) => return Err(writer.fail(e)),
            }
        }
        return Ok(());
    }
    let taken: Vec<String> = pods.iter().map(ResourceExt::name_any).collect();
    let missing = want - pods.len();
    let free = (0..)
        .filter(|slot| !taken.contains(&pod_name(replica_set, *slot)))
        .take(missing);
    for slot in free {
        writer
            .create(Kind::Pod, &pod_for(replica_set, slot))
            .await?;
    }
    Ok(())
}
