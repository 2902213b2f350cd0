//! `flotilla join NAME`: registers a member cluster in Push mode, as `karmadactl join` does: its credentials
//! in Secret `karmada-cluster/NAME` (`token`, `caBundle`), the token of the member's `karmada-impersonator`
//! ServiceAccount in Secret `karmada-cluster/NAME-impersonator`, and a Cluster with `apiEndpoint`,
//! `syncMode: Push`, `secretRef` and `impersonatorSecretRef` (flotilla_join).
//!
//! The credentials token is the member kubeconfig user's token; when that user authenticates otherwise (client
//! certificates, as kind's kubeconfigs do), ServiceAccount `karmada-NAME` is created in the member with
//! karmadactl's ClusterRole and its token used, as karmadactl always does.

use anyhow::Context;
use base64::Engine;
use flotilla_join::{Credentials, Registration, member, member_id, register};
use secrecy::ExposeSecret;

use super::kube_access::{ControlPlaneFlags, MemberFlags};

/// Arguments of `flotilla join`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Name of the member cluster (the Cluster object's name).
    pub name: String,
    /// The control plane.
    #[command(flatten)]
    pub control_plane: ControlPlaneFlags,
    /// The member.
    #[command(flatten)]
    pub member: MemberFlags,
}

/// What the member kubeconfig says about reaching the member.
#[derive(Debug, Default, PartialEq)]
struct MemberAccess {
    server: String,
    ca_bundle: Option<Vec<u8>>,
    insecure: bool,
    proxy_url: String,
    token: Option<String>,
}

/// Server, CA, TLS verification, proxy and token of the member, from the client configuration kube resolved
/// from the member kubeconfig exactly as for any client (relative paths, `*-data` and file forms, merged
/// files), so every kubeconfig kubectl accepts reads the same here.
fn member_access(config: &kube::Config) -> anyhow::Result<MemberAccess> {
    let ca_bundle = match (&config.root_cert_file, &config.root_cert) {
        (Some(path), _) => {
            Some(std::fs::read(path).with_context(|| format!("failed to read {}", path.display()))?)
        }
        (None, Some(ders)) => Some(ders.iter().map(|der| pem_certificate(der)).collect::<String>().into_bytes()),
        (None, None) => None,
    };
    let token = match (&config.auth_info.token, &config.auth_info.token_file) {
        (Some(token), _) => Some(token.expose_secret().to_owned()),
        (None, Some(file)) => Some(
            std::fs::read_to_string(file)
                .with_context(|| format!("failed to read the token file {file}"))?
                .trim()
                .to_owned(),
        ),
        (None, None) => None,
    };
    Ok(MemberAccess {
        server: config.cluster_url.to_string().trim_end_matches('/').to_owned(),
        ca_bundle,
        insecure: config.accept_invalid_certs,
        proxy_url: config
            .proxy_url
            .as_ref()
            .map(|url| url.to_string().trim_end_matches('/').to_owned())
            .unwrap_or_default(),
        token,
    })
}

/// One DER certificate as a PEM block (the form `caBundle` holds).
fn pem_certificate(der: &[u8]) -> String {
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut pem = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in body.as_bytes().chunks(64) {
        pem.push_str(&String::from_utf8_lossy(line));
        pem.push('\n');
    }
    pem.push_str("-----END CERTIFICATE-----\n");
    pem
}

/// Registers the member with the control plane.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let control = args.control_plane.client().await?;
    let config = args.member.config().await?;
    let path = &args.member.cluster_kubeconfig;
    let access = member_access(&config)
        .with_context(|| format!("invalid member kubeconfig {}", path.display()))?;
    let member = kube::Client::try_from(config).context("failed to reach the member cluster")?;
    let name = &args.name;
    let id = member_id(&member)
        .await
        .context("failed to read the member's kube-system namespace")?;
    let token = match access.token {
        Some(token) => token,
        None => {
            member::credentials_token(&member, name, member::TOKEN_TIMEOUT)
                .await
                .context("failed to obtain a token for the control plane from the member")?
                .token
        }
    };
    let impersonator = member::impersonator_token(&member, member::TOKEN_TIMEOUT)
        .await
        .context("failed to obtain the impersonator's token from the member")?;
    let registration = Registration {
        name: name.clone(),
        api_endpoint: access.server,
        credentials: Some(Credentials {
            token,
            ca_bundle: access.ca_bundle,
        }),
        impersonator_token: Some(impersonator.token),
        insecure_skip_tls_verification: access.insecure,
        proxy_url: access.proxy_url,
        id,
    };
    register(&control, &registration)
        .await
        .with_context(|| format!("failed to register cluster {name}"))?;
    println!("cluster({name}) is joined successfully");
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::path::Path;

    use super::*;

    /// The access `join` reads from the kubeconfig `text` written as `dir/config`, for `context`.
    async fn access(dir: &Path, text: &str, context: Option<&str>) -> anyhow::Result<MemberAccess> {
        let path = dir.join("config");
        std::fs::write(&path, text).unwrap();
        member_access(&crate::cmd::kube_access::config(Some(&path), context).await?)
    }

    fn kubeconfig(cluster: &str, user: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: m\nclusters:\n- name: c\n  cluster:\n{cluster}\nusers:\n\
             - name: u\n  user:\n{user}\ncontexts:\n- name: m\n  context: {{cluster: c, user: u}}\n"
        )
    }

    fn ca_pem() -> String {
        let key = rcgen::KeyPair::generate().unwrap();
        rcgen::CertificateParams::new(vec!["member".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap()
            .pem()
    }

    #[tokio::test]
    async fn member_access_reads_server_ca_data_and_token_of_the_context() {
        let dir = tempfile::tempdir().unwrap();
        let doc = flotilla_apiserver::kubeconfig::render(
            "https://127.0.0.1:7444",
            &ca_pem(),
            "t0ken",
            "member1",
        );
        let got = access(dir.path(), &doc, None).await.unwrap();
        assert_eq!(got.server, "https://127.0.0.1:7444");
        // The bundle is the same certificate, whatever line wrapping the kubeconfig's PEM had.
        let der = |pem: &[u8]| rustls_pemfile::certs(&mut &pem[..]).collect::<Result<Vec<_>, _>>().unwrap();
        assert_eq!(der(got.ca_bundle.as_deref().unwrap()), der(ca_pem_of(&doc).as_bytes()));
        assert_eq!(got.token.as_deref(), Some("t0ken"));
        assert!(!got.insecure);
        assert!(access(dir.path(), &doc, Some("nope")).await.is_err());
    }

    fn ca_pem_of(doc: &str) -> String {
        let data = doc
            .lines()
            .find_map(|l| l.trim().strip_prefix("certificate-authority-data: "))
            .unwrap();
        String::from_utf8(base64::engine::general_purpose::STANDARD.decode(data.trim()).unwrap()).unwrap()
    }

    #[tokio::test]
    async fn insecure_skip_tls_verify_and_a_proxy_carry_over_to_the_cluster() {
        let dir = tempfile::tempdir().unwrap();
        let doc = kubeconfig(
            "    server: https://10.0.0.9:6443\n    insecure-skip-tls-verify: true\n    proxy-url: http://proxy.local:3128",
            "    token: abc",
        );
        let got = access(dir.path(), &doc, None).await.unwrap();
        assert!(got.insecure, "{got:?}");
        assert_eq!(got.ca_bundle, None);
        assert_eq!(got.proxy_url, "http://proxy.local:3128");
        assert_eq!(got.server, "https://10.0.0.9:6443");
    }

    #[tokio::test]
    async fn files_named_relative_to_the_kubeconfig_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let pem = ca_pem();
        std::fs::write(dir.path().join("ca.crt"), &pem).unwrap();
        std::fs::write(dir.path().join("token"), "from-file\n").unwrap();
        let doc = kubeconfig(
            "    server: https://127.0.0.1:6443\n    certificate-authority: ca.crt",
            "    tokenFile: token",
        );
        let got = access(dir.path(), &doc, None).await.unwrap();
        assert_eq!(got.token.as_deref(), Some("from-file"));
        assert!(got.ca_bundle.is_some_and(|b| String::from_utf8(b).unwrap().contains("BEGIN CERTIFICATE")));
    }

    #[tokio::test]
    async fn a_client_certificate_user_has_no_token_so_join_makes_a_service_account() {
        let dir = tempfile::tempdir().unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["admin".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let b64 = |s: String| base64::engine::general_purpose::STANDARD.encode(s);
        let doc = kubeconfig(
            &format!("    server: https://127.0.0.1:6443\n    certificate-authority-data: {}", b64(ca_pem())),
            &format!(
                "    client-certificate-data: {}\n    client-key-data: {}",
                b64(cert.pem()),
                b64(key.serialize_pem())
            ),
        );
        let got = access(dir.path(), &doc, None).await.unwrap();
        assert_eq!(got.token, None);
    }
}
