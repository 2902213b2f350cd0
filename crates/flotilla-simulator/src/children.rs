//! Writes what the Deployment, ReplicaSet and CronJob controllers own, level-triggered: a Deployment's
//! ReplicaSet for its current template at its replica count (older ones scaled to zero: the simulated rollout
//! completes at once), a ReplicaSet's Pods, created or deleted until their number matches, and a CronJob's Job
//! for each scheduled time. Deleting the owner leaves the
//! rest to the API server's garbage collector, as in a real cluster.

use std::time::Duration;

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
        let owner_uid = uid(owner);
        let all = self
            .api(kind)
            .list(&params)
            .await
            .map_err(|e| self.fail(e))?;
        Ok(all
            .items
            .into_iter()
            .filter(|o| o.metadata.deletion_timestamp.is_none())
            .filter(|o| serde_json::to_value(o).is_ok_and(|v| controlled_by(&v, owner_uid)))
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
/// left alone. Returns when to look again though nothing changes (a CronJob's next scheduled time).
pub(crate) async fn sync(
    client: &Client,
    kind: Kind,
    object: &Value,
) -> Result<Option<Duration>, Error> {
    if object.pointer("/metadata/deletionTimestamp").is_some() {
        return Ok(None);
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
        Kind::Deployment => deployment(&writer, object).await.map(|()| None),
        Kind::ReplicaSet => replica_set(&writer, object).await.map(|()| None),
        Kind::CronJob => cron_job(&writer, object).await,
        _ => Ok(None),
    }
}

/// Runs a CronJob's Job when one is due (honouring `concurrencyPolicy`), and says when the next one is.
async fn cron_job(writer: &Writer<'_>, cron_job: &Value) -> Result<Option<Duration>, Error> {
    let now = jiff::Timestamp::now();
    let Some(due) = crate::cron_job::due(cron_job, now) else {
        return Ok(None);
    };
    if let Some(scheduled) = due.run {
        let running: Vec<DynamicObject> = writer
            .list(Kind::Job, cron_job)
            .await?
            .into_iter()
            .filter(|j| {
                serde_json::to_value(j).is_ok_and(|v| crate::cron_job::finished(&v).is_none())
            })
            .collect();
        let policy = cron_job
            .pointer("/spec/concurrencyPolicy")
            .and_then(Value::as_str)
            .unwrap_or("Allow");
        let blocked = policy == "Forbid" && !running.is_empty();
        if policy == "Replace" {
            for job in &running {
                let params = DeleteParams::background();
                match writer.api(Kind::Job).delete(&job.name_any(), &params).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(status)) if status.code == 404 => {}
                    Err(e) => return Err(writer.fail(e)),
                }
            }
        }
        if !blocked {
            writer
                .create(Kind::Job, &crate::cron_job::job_for(cron_job, scheduled))
                .await?;
        }
    }
    Ok(due.next.map(|next| {
        let wait = next.as_millisecond().saturating_sub(now.as_millisecond());
        Duration::from_millis(u64::try_from(wait).unwrap_or(0)) + Duration::from_millis(10)
    }))
}

/// The resource of what `kind` owns here, watched so that a change to one reconciles its owner.
pub(crate) fn owned_resource(kind: Kind) -> Option<ApiResource> {
    match kind {
        Kind::Deployment => Some(Kind::ReplicaSet.api_resource()),
        Kind::ReplicaSet => Some(Kind::Pod.api_resource()),
        Kind::CronJob => Some(Kind::Job.api_resource()),
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
