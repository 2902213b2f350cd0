//! The kubeconfig written for a running server: CA data, admin token, one context.

use std::path::Path;

use base64::Engine;
use serde_json::json;

/// Renders a kubeconfig for `server` (an `https://host:port` URL) with context `context`.
pub fn render(server: &str, ca_pem: &str, token: &str, context: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem.as_bytes());
    let doc = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": {"server": server, "certificate-authority-data": ca}}],
        "users": [{"name": format!("{context}-admin"), "user": {"token": token}}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": format!("{context}-admin"), "namespace": "default"}}],
        "current-context": context,
        "preferences": {},
    });
    flotilla_yaml::to_string(&doc).unwrap_or_default()
}

/// Writes `content` to `path` with mode 0600.
pub fn write(path: &Path, content: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, content)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubeconfig_has_ca_token_and_context() {
        let s = render("https://127.0.0.1:6443", "PEM", "tok", "flotilla");
        let v: serde_json::Value = flotilla_yaml::from_str(&s).expect("yaml");
        assert_eq!(v["current-context"], "flotilla");
        assert_eq!(v["users"][0]["user"]["token"], "tok");
        assert_eq!(
            v["clusters"][0]["cluster"]["certificate-authority-data"],
            "UEVN"
        );
        assert!(
            v["clusters"][0]["cluster"]
                .get("insecure-skip-tls-verify")
                .is_none()
        );
    }
}
