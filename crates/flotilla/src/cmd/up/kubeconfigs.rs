//! The kubeconfigs `flotilla up` writes, as Karmada's local-up scripts do: `karmada.config` (context
//! `karmada-apiserver`) and `members.config` (one context per member, named after it).

use anyhow::Context;
use flotilla_client::RateLimit;
use serde_json::Value;

/// Context name of the control plane in `karmada.config`.
pub const KARMADA_CONTEXT: &str = "karmada-apiserver";

/// One kubeconfig holding every context of `configs` (YAML documents with one context each); the current
/// context is the first one's.
///
/// # Errors
/// When a kubeconfig is not valid YAML.
pub fn merge(configs: &[String]) -> anyhow::Result<String> {
    let mut merged = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [],
        "users": [],
        "contexts": [],
        "preferences": {},
    });
    for (i, config) in configs.iter().enumerate() {
        let doc: Value = flotilla_yaml::from_str(config).context("failed to parse a kubeconfig")?;
        for list in ["clusters", "users", "contexts"] {
            if let (Some(from), Some(to)) = (
                doc.get(list).and_then(Value::as_array),
                merged.get_mut(list).and_then(Value::as_array_mut),
            ) {
                to.extend(from.iter().cloned());
            }
        }
        if i == 0 {
            merged["current-context"] = doc.get("current-context").cloned().unwrap_or_default();
        }
    }
    flotilla_yaml::to_string(&merged).context("failed to encode the members kubeconfig")
}

/// A kube client for a kubeconfig document (its current context), rate limited by `limit`.
///
/// # Errors
/// When the kubeconfig cannot be parsed or a client cannot be built from it.
pub async fn client(kubeconfig: &str, limit: RateLimit) -> anyhow::Result<kube::Client> {
    flotilla_client::client(config(kubeconfig).await?, limit).context("failed to create a client")
}

/// The client configuration of a kubeconfig document (its current context).
///
/// # Errors
/// When the kubeconfig cannot be parsed or loaded.
pub async fn config(kubeconfig: &str) -> anyhow::Result<kube::Config> {
    let file: kube::config::Kubeconfig =
        flotilla_yaml::from_str(kubeconfig).context("failed to parse a generated kubeconfig")?;
    kube::Config::from_custom_kubeconfig(file, &Default::default())
        .await
        .context("failed to load a generated kubeconfig")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn merged_config_has_every_context_and_the_first_is_current() {
        let one =
            flotilla_apiserver::kubeconfig::render("https://127.0.0.1:1", "A", "t1", "member1");
        let two =
            flotilla_apiserver::kubeconfig::render("https://127.0.0.1:2", "B", "t2", "member2");
        let merged: Value = flotilla_yaml::from_str(&merge(&[one, two]).unwrap()).unwrap();
        assert_eq!(merged["current-context"], "member1");
        let contexts: Vec<&str> = merged["contexts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(contexts, ["member1", "member2"]);
        assert_eq!(merged["users"].as_array().unwrap().len(), 2);
        assert_eq!(
            merged["clusters"][1]["cluster"]["server"],
            "https://127.0.0.1:2"
        );
    }
}
