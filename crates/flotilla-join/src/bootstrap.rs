//! How a Pull-mode agent comes by its own credentials, as `karmadactl register` and karmada-agent do it:
//!
//! * an administrator creates a bootstrap token ([`create_token`]): Secret `kube-system/bootstrap-token-<id>`
//!   whose user (`system:bootstrap:<id>`) is in group `system:bootstrappers:karmada:default-cluster-token`, which
//!   may post CertificateSigningRequests and have agent requests approved;
//! * the agent, authenticated by the token, asks for a client certificate ([`request_certificate`]): a
//!   CertificateSigningRequest for common name `system:karmada:agent:<cluster>` and organization
//!   `system:karmada:agents`, signer `kubernetes.io/kube-apiserver-client`, which the control plane's
//!   `agentcsrapproving` controller approves and its signer issues;
//! * the agent then works as user `system:karmada:agent:<cluster>` with what [`crate::agent_rbac`] grants, and asks
//!   for a new certificate the same way, authenticated by the old one, when little of its life is left
//!   ([`should_rotate`]).

use std::time::Duration;

use flotilla_api::names::agents;
use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestSpec,
};
use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::{Api, ObjectMeta, PostParams};
use kube::config::{
    AuthInfo, Cluster, Context, Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext,
};
use rand::Rng;

use crate::{Error, Result};

/// The signer of agent certificates.
pub const SIGNER: &str = "kubernetes.io/kube-apiserver-client";
/// The Secret type of bootstrap tokens.
const TOKEN_SECRET_TYPE: &str = "bootstrap.kubernetes.io/token";
/// How long an agent certificate is asked for, as `karmadactl register` asks: a year.
pub const CERTIFICATE_LIFETIME: Duration = Duration::from_secs(365 * 24 * 3600);
/// How often a pending request is looked at.
const POLL: Duration = Duration::from_millis(500);

/// A bootstrap token: `<id>.<secret>`.
#[derive(Clone, PartialEq, Eq)]
pub struct BootstrapToken {
    /// Six lower-case letters and digits; the Secret is `bootstrap-token-<id>`.
    pub id: String,
    /// Sixteen lower-case letters and digits.
    pub secret: String,
}

impl std::fmt::Display for BootstrapToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.id, self.secret)
    }
}

impl std::fmt::Debug for BootstrapToken {
    /// The id only: the secret stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BootstrapToken({}.<secret>)", self.id)
    }
}

fn random_word(len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    (0..len)
        .map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]))
        .collect()
}

/// Creates a bootstrap token for registering agents, as `karmadactl token create` does: usable for
/// authentication and for signing `kube-public/cluster-info`, in group
/// `system:bootstrappers:karmada:default-cluster-token`, expiring after `ttl` (never with `None`).
///
/// # Errors
/// `Kube` when the Secret cannot be created.
pub async fn create_token(
    control: &Client,
    ttl: Option<Duration>,
    description: &str,
) -> Result<BootstrapToken> {
    let token = BootstrapToken {
        id: random_word(6),
        secret: random_word(16),
    };
    let mut data = vec![
        ("token-id", token.id.clone()),
        ("token-secret", token.secret.clone()),
        ("usage-bootstrap-authentication", "true".to_owned()),
        ("usage-bootstrap-signing", "true".to_owned()),
        (
            "auth-extra-groups",
            agents::BOOTSTRAP_TOKEN_GROUP.to_owned(),
        ),
        ("description", description.to_owned()),
    ];
    if let Some(ttl) = ttl {
        let ttl = jiff::SignedDuration::try_from(ttl)
            .map_err(|e| Error::credentials("the bootstrap token's lifetime", e))?;
        let expiration = jiff::Timestamp::now()
            .checked_add(ttl)
            .map_err(|e| Error::credentials("the bootstrap token's lifetime", e))?;
        data.push((
            "expiration",
            expiration.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        ));
    }
    let name = format!("bootstrap-token-{}", token.id);
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: Some("kube-system".to_owned()),
            ..ObjectMeta::default()
        },
        type_: Some(TOKEN_SECRET_TYPE.to_owned()),
        data: Some(
            data.into_iter()
                .map(|(k, v)| (k.to_owned(), ByteString(v.into_bytes())))
                .collect(),
        ),
        ..Secret::default()
    };
    Api::<Secret>::namespaced(control.clone(), "kube-system")
        .create(&PostParams::default(), &secret)
        .await
        .map_err(|source| Error::kube("create", format!("Secret kube-system/{name}"), source))?;
    Ok(token)
}

/// An agent's client certificate and its key, both PEM.
#[derive(Clone)]
pub struct AgentCertificate {
    /// The issued certificate (chain), PEM.
    pub certificate: String,
    /// Its private key, PEM.
    pub key: String,
}

impl std::fmt::Debug for AgentCertificate {
    /// The certificate's validity only: the key stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentCertificate")
            .field("validity", &validity(&self.certificate).ok())
            .finish_non_exhaustive()
    }
}

/// Asks the control plane `client` reaches for a client certificate of the agent of `cluster` valid for
/// `lifetime`, and waits up to `timeout` for it to be issued. `client` authenticates with a bootstrap token (a
/// first certificate) or with the agent's current certificate (a renewal).
///
/// # Errors
/// `Credentials` when no key or request can be made, `Kube` when the request cannot be created or read,
/// `CertificateRefused` when it is denied or fails, `CertificateNotIssued` after `timeout`.
pub async fn request_certificate(
    client: &Client,
    cluster: &str,
    lifetime: Duration,
    timeout: Duration,
) -> Result<AgentCertificate> {
    let key =
        rcgen::KeyPair::generate().map_err(|e| Error::credentials("the agent's private key", e))?;
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, agents::GROUP);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, agents::user(cluster));
    let request = params
        .serialize_request(&key)
        .and_then(|csr| csr.pem())
        .map_err(|e| Error::credentials("the agent's certificate request", e))?;
    let name = format!("{cluster}-{}", random_word(5));
    let csr = CertificateSigningRequest {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            ..ObjectMeta::default()
        },
        spec: CertificateSigningRequestSpec {
            request: ByteString(request.into_bytes()),
            signer_name: SIGNER.to_owned(),
            expiration_seconds: i32::try_from(lifetime.as_secs()).ok(),
            usages: Some(
                ["digital signature", "key encipherment", "client auth"]
                    .map(str::to_owned)
                    .to_vec(),
            ),
            ..CertificateSigningRequestSpec::default()
        },
        status: None,
    };
    let api: Api<CertificateSigningRequest> = Api::all(client.clone());
    let describe = || format!("CertificateSigningRequest {name}");
    api.create(&PostParams::default(), &csr)
        .await
        .map_err(|source| Error::kube("create", describe(), source))?;
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let current = api
            .get(&name)
            .await
            .map_err(|source| Error::kube("get", describe(), source))?;
        let status = current.status.unwrap_or_default();
        if let Some(certificate) = status.certificate.filter(|c| !c.0.is_empty()) {
            let certificate = String::from_utf8(certificate.0)
                .map_err(|e| Error::credentials(format!("the certificate of {}", describe()), e))?;
            return Ok(AgentCertificate {
                certificate,
                key: key.serialize_pem(),
            });
        }
        for condition in status.conditions.unwrap_or_default() {
            let verdict = match condition.type_.as_str() {
                "Denied" => "denied",
                "Failed" => "failed",
                _ => continue,
            };
            if condition.status == "True" {
                return Err(Error::CertificateRefused {
                    name,
                    verdict,
                    reason: condition.reason.unwrap_or_default(),
                    message: condition.message.unwrap_or_default(),
                });
            }
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::CertificateNotIssued {
                name,
                waited: timeout,
            });
        }
        tokio::time::sleep(POLL).await;
    }
}

/// When the certificates of a PEM chain begin and end to be valid, as the intersection of their validities.
///
/// # Errors
/// `Credentials` when `pem` holds no readable certificate.
pub fn validity(pem: &str) -> Result<(jiff::Timestamp, jiff::Timestamp)> {
    let mut range: Option<(i64, i64)> = None;
    for block in x509_parser::pem::Pem::iter_from_buffer(pem.as_bytes()) {
        let block = block.map_err(|e| Error::credentials("the agent's certificate", e))?;
        let certificate = block
            .parse_x509()
            .map_err(|e| Error::credentials("the agent's certificate", e))?;
        let begins = certificate.validity().not_before.timestamp();
        let ends = certificate.validity().not_after.timestamp();
        range = Some(match range {
            None => (begins, ends),
            Some((b, e)) => (b.max(begins), e.min(ends)),
        });
    }
    let (begins, ends) = range
        .ok_or_else(|| Error::credentials("the agent's certificate", "no certificate in PEM"))?;
    let at = |seconds| {
        jiff::Timestamp::from_second(seconds)
            .map_err(|e| Error::credentials("the agent's certificate", e))
    };
    Ok((at(begins)?, at(ends)?))
}

/// Whether a certificate valid from `begins` to `ends` has no more than `threshold` (a fraction) of its life
/// left at `now`, as karmada-agent's certificate rotation decides.
pub fn should_rotate(
    (begins, ends): (jiff::Timestamp, jiff::Timestamp),
    threshold: f64,
    now: jiff::Timestamp,
) -> bool {
    let total = ends.duration_since(begins).as_secs_f64();
    let remaining = ends.duration_since(now).as_secs_f64();
    total <= 0.0 || remaining / total <= threshold
}

/// A kubeconfig reaching the control plane as `control`'s context `context` (its current one without a name)
/// reaches it, authenticated by bootstrap `token` instead: what an agent bootstraps with.
///
/// # Errors
/// `Credentials` when `control` has no such context or cluster.
pub fn token_kubeconfig(
    control: &Kubeconfig,
    context: Option<&str>,
    token: &BootstrapToken,
) -> Result<Kubeconfig> {
    let what = "the control plane's kubeconfig";
    let name = context
        .or(control.current_context.as_deref())
        .ok_or_else(|| Error::credentials(what, "it has no current context"))?;
    let named = control
        .contexts
        .iter()
        .find(|c| c.name == name)
        .and_then(|c| c.context.as_ref())
        .ok_or_else(|| Error::credentials(what, format!("it has no context {name:?}")))?;
    let cluster = control
        .clusters
        .iter()
        .find(|c| c.name == named.cluster)
        .and_then(|c| c.cluster.clone())
        .ok_or_else(|| {
            Error::credentials(what, format!("it has no cluster {:?}", named.cluster))
        })?;
    Ok(single(
        cluster,
        "token-bootstrap-client",
        AuthInfo {
            token: Some(token.to_string().into()),
            ..AuthInfo::default()
        },
    ))
}

/// A kubeconfig of one cluster (named `karmada-apiserver`, as Karmada names the control plane in the agent's) and
/// one user, its current context theirs.
fn single(cluster: Cluster, user: &str, auth: AuthInfo) -> Kubeconfig {
    let context = format!("{user}@karmada-apiserver");
    Kubeconfig {
        clusters: vec![NamedCluster {
            other: Default::default(),
            name: "karmada-apiserver".to_owned(),
            cluster: Some(cluster),
        }],
        auth_infos: vec![NamedAuthInfo {
            other: Default::default(),
            name: user.to_owned(),
            auth_info: Some(auth),
        }],
        contexts: vec![NamedContext {
            other: Default::default(),
            name: context.clone(),
            context: Some(Context {
                cluster: "karmada-apiserver".to_owned(),
                user: Some(user.to_owned()),
                ..Context::default()
            }),
        }],
        current_context: Some(context),
        ..Kubeconfig::default()
    }
}

/// A kubeconfig reaching `server` (trusting the PEM `ca`, or any server without one) as the agent of `cluster`
/// with `credentials`, named as `karmadactl register` names the agent's.
pub fn agent_kubeconfig(
    server: &str,
    ca: Option<&str>,
    cluster: &str,
    credentials: &AgentCertificate,
) -> Kubeconfig {
    let encode = |pem: &str| {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(pem)
    };
    single(
        Cluster {
            server: Some(server.to_owned()),
            certificate_authority_data: ca.map(encode),
            insecure_skip_tls_verify: ca.is_none().then_some(true),
            ..Cluster::default()
        },
        &agents::user(cluster),
        AuthInfo {
            client_certificate_data: Some(encode(&credentials.certificate)),
            client_key_data: Some(encode(&credentials.key).into()),
            ..AuthInfo::default()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_have_kube_bootstrap_token_shape() {
        let word = random_word(16);
        assert_eq!(word.len(), 16);
        assert!(
            word.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        );
        let token = BootstrapToken {
            id: "abcdef".into(),
            secret: "0123456789abcdef".into(),
        };
        assert_eq!(token.to_string(), "abcdef.0123456789abcdef");
        assert!(!format!("{token:?}").contains("0123456789abcdef"));
    }

    #[test]
    fn a_bootstrap_kubeconfig_reaches_the_control_plane_as_the_admin_does_with_the_token_only() {
        let admin = Kubeconfig::from_yaml(
            "apiVersion: v1\nkind: Config\ncurrent-context: admin\nclusters:\n- name: cp\n  cluster:\n    \
             server: https://127.0.0.1:7443\n    certificate-authority-data: Q0E=\ncontexts:\n- name: admin\n  \
             context: {cluster: cp, user: admin}\nusers:\n- name: admin\n  user: {token: secret-admin}\n",
        )
        .expect("kubeconfig");
        let token = BootstrapToken {
            id: "abcdef".into(),
            secret: "0123456789abcdef".into(),
        };
        let bootstrap = token_kubeconfig(&admin, None, &token).expect("bootstrap kubeconfig");
        let text = serde_json::to_string(&bootstrap).expect("json");
        assert!(
            text.contains("https://127.0.0.1:7443") && text.contains("Q0E="),
            "{text}"
        );
        assert!(text.contains("abcdef.0123456789abcdef"), "{text}");
        assert!(!text.contains("secret-admin"), "{text}");
        assert!(token_kubeconfig(&admin, Some("missing"), &token).is_err());
    }

    #[test]
    fn rotation_starts_when_the_remaining_share_reaches_the_threshold() {
        let begins = jiff::Timestamp::from_second(0).unwrap_or_default();
        let ends = jiff::Timestamp::from_second(1000).unwrap_or_default();
        let at = |s| jiff::Timestamp::from_second(s).unwrap_or_default();
        assert!(!should_rotate((begins, ends), 0.2, at(700)));
        assert!(should_rotate((begins, ends), 0.2, at(800)));
        assert!(should_rotate((begins, ends), 0.2, at(2000)));
    }

    #[test]
    fn validity_reads_a_certificate_and_rejects_garbage() {
        let key = rcgen::KeyPair::generate().expect("key");
        let params = rcgen::CertificateParams::new(vec!["x".to_owned()]).expect("params");
        let certificate = params.self_signed(&key).expect("certificate").pem();
        let (begins, ends) = validity(&certificate).expect("validity");
        assert!(begins < ends);
        assert!(validity("not a certificate").is_err());
    }
}
