//! The admission plugins kube-apiserver enables by default that change an object on create (after
//! defaulting, before validation): DefaultIngressClass, DefaultStorageClass, and for Pods ServiceAccount
//! (`spec.serviceAccountName` defaults to `default`, and unless automount is off a projected
//! `kube-api-access-<suffix>` volume with the token, `kube-root-ca.crt` and the namespace is mounted read-only
//! into every container and init container), DefaultTolerationSeconds (tolerate the not-ready and unreachable
//! taints for 300 s) and Priority (`spec.priority` and `spec.preemptionPolicy` from the PriorityClass, or from
//! the global default class, or 0), and LimitRanger's container defaults (`limit_ranger`).
//!
//! Unlike upstream's ServiceAccount plugin, a missing ServiceAccount is not refused: ours appears a moment
//! after its namespace (as upstream's does), and refusing would make a Pod created right after its
//! namespace fail here where kube-apiserver's plugin would have waited for the informer.

mod limit_ranger;
pub mod webhooks;

use serde_json::{Map, Value, json};

use crate::resource::ResourceInfo;
use crate::status::{ApiError, ApiResult};
use flotilla_store::{ResKey, Store};

/// Name of the ConfigMap holding the cluster CA in every namespace (the ServiceAccount plugin mounts it; the
/// published-objects controller keeps it).
pub(crate) const ROOT_CA_CONFIGMAP: &str = "kube-root-ca.crt";

/// How long a Pod tolerates a not-ready or unreachable node before eviction, when it does not say.
const DEFAULT_TOLERATION_SECONDS: i64 = 300;
const NOT_READY: &str = "node.kubernetes.io/not-ready";
const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
const PREEMPT_LOWER: &str = "PreemptLowerPriority";
/// Prefix of the projected token volume's generated name.
const TOKEN_VOLUME_PREFIX: &str = "kube-api-access-";
/// Where in-cluster clients look for the token, CA and namespace.
const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// The bound token's lifetime upstream projects (an hour plus seven seconds, so it can be told apart).
const TOKEN_EXPIRATION_SECONDS: i64 = 3607;
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";

/// Applies the create-time mutating admission plugins to a new built-in object: the Pod ones above,
/// DefaultIngressClass and DefaultStorageClass.
pub fn admit_create(store: &Store, info: &ResourceInfo, obj: &mut Value) -> ApiResult<()> {
    if info.custom {
        return Ok(());
    }
    match (info.group.as_str(), info.plural.as_str()) {
        ("", "pods") => admit_pod_create(store, obj),
        ("networking.k8s.io", "ingresses") => default_ingress_class(store, obj),
        ("", "persistentvolumeclaims") => {
            default_storage_class(store, obj);
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The classes of `res` whose `annotation` is `"true"`, newest first (then by name).
fn default_classes(store: &Store, res: &ResKey, annotation: &str) -> Vec<String> {
    let mut found: Vec<(String, String)> = store
        .list(res, None)
        .1
        .iter()
        .filter(|c| {
            c.pointer("/metadata/annotations")
                .and_then(|a| a.get(annotation))
                .and_then(Value::as_str)
                == Some("true")
        })
        .map(|c| {
            let created = crate::meta::meta_str(c, "creationTimestamp").unwrap_or("");
            let name = crate::meta::meta_str(c, "name").unwrap_or("");
            (created.to_string(), name.to_string())
        })
        .collect();
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    found.into_iter().map(|(_, name)| name).collect()
}

fn has_annotation(obj: &Value, key: &str) -> bool {
    obj.pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|a| a.contains_key(key))
}

/// DefaultIngressClass: an Ingress naming no class (neither field nor legacy annotation) gets the one
/// IngressClass marked default; several defaults refuse it, as upstream does.
fn default_ingress_class(store: &Store, ing: &mut Value) -> ApiResult<()> {
    let named = ing
        .pointer("/spec/ingressClassName")
        .is_some_and(|v| !v.is_null());
    if named || has_annotation(ing, "kubernetes.io/ingress.class") {
        return Ok(());
    }
    let defaults = default_classes(
        store,
        &ResKey::new("networking.k8s.io", "ingressclasses"),
        "ingressclass.kubernetes.io/is-default-class",
    );
    match defaults.as_slice() {
        [] => Ok(()),
        [one] => {
            if !ing.get("spec").is_some_and(Value::is_object) {
                ing["spec"] = json!({});
            }
            ing["spec"]["ingressClassName"] = json!(one);
            Ok(())
        }
        many => {
            let name = crate::meta::meta_str(ing, "name").unwrap_or("");
            Err(ApiError::forbidden(format!(
                "ingresses.networking.k8s.io \"{name}\" is forbidden: Internal error occurred: {} default IngressClasses were found, only 1 allowed",
                many.len()
            ))
            .with_details(Map::from_iter([
                ("name".to_string(), json!(name)),
                ("group".to_string(), json!("networking.k8s.io")),
                ("kind".to_string(), json!("ingresses")),
            ])))
        }
    }
}

/// DefaultStorageClass: a claim with no `storageClassName` at all (an empty one means "no class") and no
/// beta annotation gets the default StorageClass, the newest when several are marked.
fn default_storage_class(store: &Store, pvc: &mut Value) {
    let named = pvc
        .pointer("/spec/storageClassName")
        .is_some_and(|v| !v.is_null());
    if named || has_annotation(pvc, "volume.beta.kubernetes.io/storage-class") {
        return;
    }
    let defaults = default_classes(
        store,
        &ResKey::new("storage.k8s.io", "storageclasses"),
        "storageclass.kubernetes.io/is-default-class",
    );
    if let Some(newest) = defaults.first() {
        if !pvc.get("spec").is_some_and(Value::is_object) {
            pvc["spec"] = json!({});
        }
        pvc["spec"]["storageClassName"] = json!(newest);
    }
}

/// Applies the create-time Pod admission plugins to `pod`.
fn admit_pod_create(store: &Store, pod: &mut Value) -> ApiResult<()> {
    let name = crate::meta::meta_str(pod, "name").unwrap_or("").to_string();
    let ns = crate::meta::meta_str(pod, "namespace")
        .unwrap_or("")
        .to_string();
    // Static pods' mirrors are left to the kubelet that wrote them.
    let mirror = pod
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|a| a.contains_key(MIRROR_ANNOTATION));
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    if !mirror {
        let sa_name = service_account(spec);
        let sa = store.get(&ResKey::new("", "serviceaccounts"), &ns, &sa_name);
        let sa_automount = sa.and_then(|sa| sa.get("automountServiceAccountToken")?.as_bool());
        token_volume(spec, sa_automount);
    }
    default_tolerations(spec);
    let ranges = store.list(&ResKey::new("", "limitranges"), Some(&ns)).1;
    limit_ranger::apply(pod, &ranges.iter().map(AsRef::as_ref).collect::<Vec<_>>());
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    let classes = store
        .list(&ResKey::new("scheduling.k8s.io", "priorityclasses"), None)
        .1;
    priority(spec, classes.iter().map(AsRef::as_ref)).map_err(|reason| forbidden(&name, &reason))
}

fn forbidden(name: &str, reason: &str) -> ApiError {
    ApiError::forbidden(format!("pods \"{name}\" is forbidden: {reason}")).with_details(
        Map::from_iter([
            ("name".to_string(), json!(name)),
            ("kind".to_string(), json!("pods")),
        ]),
    )
}

/// Defaults `serviceAccountName`; returns the ServiceAccount the Pod runs as.
fn service_account(spec: &mut Map<String, Value>) -> String {
    if let Some(named) = spec
        .get("serviceAccountName")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        return named.to_string();
    }
    // The deprecated `serviceAccount` alias wins when only it is given, as upstream's conversion does.
    let sa = spec
        .get("serviceAccount")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or("default")
        .to_string();
    spec.insert("serviceAccountName".to_string(), json!(sa));
    // The alias follows, as upstream's defaulting makes it when the stored Pod is read back.
    spec.insert("serviceAccount".to_string(), json!(sa));
    sa
}

/// Mounts the projected token volume into every container and init container that has nothing at the token
/// path yet, adding the volume if one of them needed it (an existing `kube-api-access-*` volume is reused).
/// The Pod's `automountServiceAccountToken` wins over its ServiceAccount's; both absent means on.
fn token_volume(spec: &mut Map<String, Value>, sa_automount: Option<bool>) {
    let automount = spec
        .get("automountServiceAccountToken")
        .and_then(Value::as_bool)
        .or(sa_automount)
        .unwrap_or(true);
    if !automount {
        return;
    }
    let existing = spec
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .find(|n| n.starts_with(TOKEN_VOLUME_PREFIX))
        .map(str::to_string);
    let volume_name = existing
        .clone()
        .unwrap_or_else(|| crate::meta::generate_name(TOKEN_VOLUME_PREFIX));
    let mount = json!({"name": volume_name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
    let mut mounted = false;
    for list in ["initContainers", "containers"] {
        for c in spec
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            let mounts = c
                .entry("volumeMounts")
                .or_insert_with(|| Value::Array(Vec::new()));
            if !mounts.is_array() {
                *mounts = Value::Array(Vec::new());
            }
            let Some(mounts) = mounts.as_array_mut() else {
                continue;
            };
            let taken = mounts
                .iter()
                .any(|m| m.get("mountPath").and_then(Value::as_str) == Some(TOKEN_MOUNT_PATH));
            if !taken {
                mounts.push(mount.clone());
                mounted = true;
            }
        }
    }
    if mounted && existing.is_none() {
        let volume = json!({"name": volume_name, "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
            {"configMap": {"name": ROOT_CA_CONFIGMAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ]}});
        let volumes = spec
            .entry("volumes")
            .or_insert_with(|| Value::Array(Vec::new()));
        if !volumes.is_array() {
            *volumes = Value::Array(Vec::new());
        }
        if let Some(volumes) = volumes.as_array_mut() {
            volumes.push(volume);
        }
    }
}

/// Whether some toleration already covers `key` with effect NoExecute (an empty key or effect matches all).
fn tolerates(tolerations: &[Value], key: &str) -> bool {
    tolerations.iter().any(|t| {
        let k = t.get("key").and_then(Value::as_str).unwrap_or("");
        let effect = t.get("effect").and_then(Value::as_str).unwrap_or("");
        (k.is_empty() || k == key) && (effect.is_empty() || effect == "NoExecute")
    })
}

fn default_tolerations(spec: &mut Map<String, Value>) {
    let entry = spec
        .entry("tolerations")
        .or_insert_with(|| Value::Array(Vec::new()));
    if entry.is_null() {
        *entry = Value::Array(Vec::new());
    }
    let Some(list) = entry.as_array_mut() else {
        return;
    };
    for key in [NOT_READY, UNREACHABLE] {
        if !tolerates(list, key) {
            list.push(
                json!({"key": key, "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": DEFAULT_TOLERATION_SECONDS}),
            );
        }
    }
}

/// Sets `priority`, `preemptionPolicy` and (from a global default class) `priorityClassName`; the reason a
/// Pod is refused otherwise, in upstream's words.
fn priority<'a>(
    spec: &mut Map<String, Value>,
    classes: impl Iterator<Item = &'a Value>,
) -> Result<(), String> {
    let wanted = spec
        .get("priorityClassName")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let class_name = |c: &Value| crate::meta::meta_str(c, "name").map(str::to_string);
    let value_of = |c: &Value| c.get("value").and_then(Value::as_i64).unwrap_or(0);
    let policy_of = |c: &Value| {
        c.get("preemptionPolicy")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let (name, value, policy) = match wanted {
        Some(wanted) => {
            let class = classes
                .into_iter()
                .find(|c| class_name(c).as_deref() == Some(wanted.as_str()))
                .ok_or_else(|| format!("no PriorityClass with name {wanted} was found"))?;
            (Some(wanted), value_of(class), policy_of(class))
        }
        // The global default with the lowest value, as upstream picks when several claim it.
        None => match classes
            .filter(|c| c.get("globalDefault").and_then(Value::as_bool) == Some(true))
            .min_by_key(|c| value_of(c))
        {
            Some(c) => (class_name(c), value_of(c), policy_of(c)),
            None => (None, 0, Some(PREEMPT_LOWER.to_string())),
        },
    };
    if let Some(given) = spec.get("priority").and_then(Value::as_i64)
        && given != value
    {
        return Err(format!(
            "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {value} from the given PriorityClass name"
        ));
    }
    if let Some(name) = name {
        spec.insert("priorityClassName".to_string(), json!(name));
    }
    spec.insert("priority".to_string(), json!(value));
    if let Some(policy) = policy {
        if let Some(given) = spec.get("preemptionPolicy").and_then(Value::as_str)
            && given != policy
        {
            return Err(format!(
                "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"
            ));
        }
        spec.insert("preemptionPolicy".to_string(), json!(policy));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn spec(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn tolerations_are_added_only_when_not_already_tolerated() {
        let mut s = spec(json!({}));
        default_tolerations(&mut s);
        let keys: Vec<_> = s["tolerations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["key"].clone(), t["tolerationSeconds"].clone()))
            .collect();
        assert_eq!(
            keys,
            [
                (json!(NOT_READY), json!(300)),
                (json!(UNREACHABLE), json!(300))
            ]
        );
        // An own not-ready toleration (any effect) is kept and only unreachable is added.
        let mut s = spec(
            json!({"tolerations": [{"key": NOT_READY, "operator": "Exists", "tolerationSeconds": 5}]}),
        );
        default_tolerations(&mut s);
        assert_eq!(s["tolerations"].as_array().unwrap().len(), 2);
        assert_eq!(s["tolerations"][0]["tolerationSeconds"], json!(5));
        // A NoSchedule toleration of not-ready does not cover NoExecute; an empty key with no effect tolerates all.
        let mut s = spec(json!({"tolerations": [{"key": NOT_READY, "effect": "NoSchedule"}]}));
        default_tolerations(&mut s);
        assert_eq!(s["tolerations"].as_array().unwrap().len(), 3);
        let mut s = spec(json!({"tolerations": [{"operator": "Exists"}]}));
        default_tolerations(&mut s);
        assert_eq!(s["tolerations"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn service_account_defaults_to_default_or_the_deprecated_alias() {
        let mut s = spec(json!({}));
        service_account(&mut s);
        assert_eq!(s["serviceAccountName"], json!("default"));
        assert_eq!(s["serviceAccount"], json!("default"));
        let mut s = spec(json!({"serviceAccount": "old"}));
        service_account(&mut s);
        assert_eq!(s["serviceAccountName"], json!("old"));
        let mut s = spec(json!({"serviceAccountName": "mine"}));
        service_account(&mut s);
        assert_eq!(s["serviceAccountName"], json!("mine"));
    }

    #[test]
    fn the_token_volume_is_mounted_unless_automount_is_off_or_the_path_is_taken() {
        let mut s = spec(json!({"initContainers": [{"name": "i"}], "containers": [
            {"name": "a"},
            {"name": "b", "volumeMounts": [{"name": "own", "mountPath": TOKEN_MOUNT_PATH}]}]}));
        token_volume(&mut s, None);
        let volumes = s["volumes"].as_array().unwrap();
        assert_eq!(volumes.len(), 1);
        let name = volumes[0]["name"].as_str().unwrap().to_string();
        assert!(
            name.starts_with(TOKEN_VOLUME_PREFIX) && name.len() == TOKEN_VOLUME_PREFIX.len() + 5
        );
        let sources = &volumes[0]["projected"]["sources"];
        assert_eq!(
            sources[0]["serviceAccountToken"]["expirationSeconds"],
            json!(3607)
        );
        assert_eq!(sources[1]["configMap"]["name"], json!("kube-root-ca.crt"));
        let mount = json!([{"name": name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH}]);
        assert_eq!(s["initContainers"][0]["volumeMounts"], mount);
        assert_eq!(s["containers"][0]["volumeMounts"], mount);
        assert_eq!(s["containers"][1]["volumeMounts"][0]["name"], json!("own"));
        assert_eq!(
            s["containers"][1]["volumeMounts"].as_array().unwrap().len(),
            1
        );
        // The Pod's setting wins over its ServiceAccount's.
        for (pod, sa, want) in [
            (None, Some(false), false),
            (Some(true), Some(false), true),
            (Some(false), None, false),
        ] {
            let mut s = spec(json!({"containers": [{"name": "a"}]}));
            if let Some(p) = pod {
                s.insert("automountServiceAccountToken".into(), json!(p));
            }
            token_volume(&mut s, sa);
            assert_eq!(s.contains_key("volumes"), want, "pod {pod:?} sa {sa:?}");
        }
        // Every container already mounting the path: no volume.
        let mut s = spec(
            json!({"containers": [{"name": "b", "volumeMounts": [{"name": "own", "mountPath": TOKEN_MOUNT_PATH}]}]}),
        );
        token_volume(&mut s, None);
        assert!(!s.contains_key("volumes"));
    }

    #[test]
    fn priority_comes_from_the_class_the_global_default_or_zero() {
        let high =
            json!({"metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"});
        let dflt = json!({"metadata": {"name": "dflt"}, "value": 7, "globalDefault": true, "preemptionPolicy": PREEMPT_LOWER});
        let mut s = spec(json!({"priorityClassName": "high"}));
        priority(&mut s, [&high, &dflt].into_iter()).unwrap();
        assert_eq!(
            (&s["priority"], &s["preemptionPolicy"]),
            (&json!(1000), &json!("Never"))
        );
        let mut s = spec(json!({}));
        priority(&mut s, [&high, &dflt].into_iter()).unwrap();
        assert_eq!(
            (&s["priority"], &s["priorityClassName"]),
            (&json!(7), &json!("dflt"))
        );
        let mut s = spec(json!({}));
        priority(&mut s, [&high].into_iter()).unwrap();
        assert_eq!(
            (&s["priority"], &s["preemptionPolicy"]),
            (&json!(0), &json!(PREEMPT_LOWER))
        );
        assert!(!s.contains_key("priorityClassName"));
        // A matching explicit priority is accepted; a different one, a different policy or a missing class is not.
        let mut s = spec(json!({"priorityClassName": "high", "priority": 1000}));
        assert!(priority(&mut s, [&high].into_iter()).is_ok());
        let mut s = spec(json!({"priority": 5}));
        let err = priority(&mut s, [&high].into_iter()).unwrap_err();
        assert!(
            err.starts_with("the integer value of priority (5) must not be provided"),
            "{err}"
        );
        let mut s = spec(json!({"priorityClassName": "high", "preemptionPolicy": PREEMPT_LOWER}));
        assert!(priority(&mut s, [&high].into_iter()).is_err());
        let mut s = spec(json!({"priorityClassName": "nope"}));
        assert_eq!(
            priority(&mut s, [&high].into_iter()).unwrap_err(),
            "no PriorityClass with name nope was found"
        );
    }
}
