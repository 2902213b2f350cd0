//! kube-controller-manager's `csrsigning` controller for the signer every client certificate of this server
//! comes from: an approved, not failed CertificateSigningRequest for `kubernetes.io/kube-apiserver-client`
//! without a certificate gets one, issued by the cluster CA (the CA clients trust and this server verifies
//! client certificates with) for the request's subject and names, with the usages the spec asks for, valid from
//! five minutes ago for `spec.expirationSeconds` (at least ten minutes, at most a year; a year when unset; five
//! minutes shorter for eight hours or more, as upstream backdates). A request whose usages are not a client
//! certificate's gets upstream's `Failed` condition `SignerValidationFailure`; one that cannot be parsed waits
//! for a change. Other signers are left to their own controllers.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use base64::Engine;
use rcgen::{
    CertificateSigningRequestParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SerialNumber,
};
use serde_json::{Value, json};

use flotilla_registry::context::Ctx;
use flotilla_registry::controllers::runtime::{Next, Reconciler, Watches};
use flotilla_registry::meta::Endpoint;
use flotilla_registry::status::ApiError;
use flotilla_registry::write;
use flotilla_store::ResKey;
use flotilla_store::hub::Event;

/// The signer this controller serves.
pub const KUBE_APISERVER_CLIENT: &str = "kubernetes.io/kube-apiserver-client";

/// `--cluster-signing-duration`'s default.
const MAX_TTL: Duration = Duration::from_secs(365 * 24 * 3600);
const MIN_TTL: Duration = Duration::from_secs(10 * 60);
const BACKDATE: Duration = Duration::from_secs(5 * 60);
const SHORT: Duration = Duration::from_secs(8 * 3600);

fn csrs() -> ResKey {
    ResKey::new("certificates.k8s.io", "certificatesigningrequests")
}

fn has_true(csr: &Value, kind: &str) -> bool {
    csr.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some(kind)
                    && c.get("status").and_then(Value::as_str) == Some("True")
            })
        })
}

/// Whether the controller has work on `csr`: approved, not failed, for this signer, without a certificate.
fn wants_certificate(csr: &Value) -> bool {
    csr.pointer("/spec/signerName").and_then(Value::as_str) == Some(KUBE_APISERVER_CLIENT)
        && has_true(csr, "Approved")
        && !has_true(csr, "Failed")
        && csr
            .pointer("/status/certificate")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
}

/// How long a certificate for a request asking `expiration_seconds` lives.
fn ttl(expiration_seconds: Option<u64>) -> Duration {
    match expiration_seconds {
        None => MAX_TTL,
        Some(s) => Duration::from_secs(s).clamp(MIN_TTL, MAX_TTL),
    }
}

/// The key usages and extended key usages `usages` name, or upstream's refusal of a client certificate's.
fn client_usages(
    usages: &[&str],
) -> Result<(Vec<KeyUsagePurpose>, Vec<ExtendedKeyUsagePurpose>), String> {
    let mut key = Vec::new();
    let mut client = false;
    for usage in usages {
        match *usage {
            "digital signature" => key.push(KeyUsagePurpose::DigitalSignature),
            "key encipherment" => key.push(KeyUsagePurpose::KeyEncipherment),
            "client auth" => client = true,
            other => return Err(format!("invalid usage for client certificate: {other}")),
        }
    }
    if !client {
        return Err("missing required usage for client certificate: client auth".into());
    }
    Ok((key, vec![ExtendedKeyUsagePurpose::ClientAuth]))
}

/// The cluster CA, which signs client certificates.
pub struct Signer {
    issuer: Issuer<'static, KeyPair>,
}

impl Signer {
    /// A signer issuing as `issuer` (the cluster CA).
    pub(crate) fn new(issuer: Issuer<'static, KeyPair>) -> Self {
        Self { issuer }
    }

    /// The PEM certificate for the PEM request `request`, valid `ttl` from `now`.
    fn sign(
        &self,
        request: &str,
        usages: &[&str],
        ttl: Duration,
        now: SystemTime,
    ) -> Result<Result<String, String>, String> {
        let (key_usages, extended) = match client_usages(usages) {
            Ok(u) => u,
            Err(refusal) => return Ok(Err(refusal)),
        };
        let mut csr = CertificateSigningRequestParams::from_pem(request)
            .map_err(|e| format!("unable to parse csr: {e}"))?;
        let params = &mut csr.params;
        params.key_usages = key_usages;
        params.extended_key_usages = extended;
        params.is_ca = IsCa::ExplicitNoCa;
        params.use_authority_key_identifier_extension = true;
        let mut serial = [0u8; 16];
        rand::RngCore::fill_bytes(&mut rand::rng(), &mut serial);
        serial[0] &= 0x7f;
        params.serial_number = Some(SerialNumber::from_slice(&serial));
        params.not_before = (now - BACKDATE).into();
        params.not_after = if ttl < SHORT {
            now + ttl
        } else {
            now + ttl - BACKDATE
        }
        .into();
        let cert = csr
            .signed_by(&self.issuer)
            .map_err(|e| format!("error auto signing csr: {e}"))?;
        Ok(Ok(cert.pem()))
    }
}

/// The signing controller.
pub(crate) struct Signing {
    pub signer: Arc<Signer>,
}

impl Reconciler for Signing {
    type Key = String;

    fn name(&self) -> &'static str {
        "csrsigning"
    }

    fn watches(&self) -> Watches {
        Watches::Resources(vec![csrs()])
    }

    fn resync(&mut self, ctx: &Ctx) -> Vec<String> {
        ctx.store
            .list(&csrs(), None)
            .1
            .iter()
            .filter(|c| wants_certificate(c))
            .filter_map(|c| flotilla_registry::meta::meta_str(c, "name").map(str::to_string))
            .collect()
    }

    fn observe(&mut self, _ctx: &Ctx, event: &Event) -> Vec<String> {
        wants_certificate(&event.object)
            .then(|| flotilla_registry::meta::meta_str(&event.object, "name").map(str::to_string))
            .flatten()
            .into_iter()
            .collect()
    }

    async fn reconcile(&self, ctx: &Arc<Ctx>, key: &String) -> Result<Next, ApiError> {
        let Some(cur) = ctx
            .store
            .get(&csrs(), "", key)
            .filter(|c| wants_certificate(c))
        else {
            return Ok(Next::Done);
        };
        let request = cur
            .pointer("/spec/request")
            .and_then(Value::as_str)
            .and_then(|r| base64::engine::general_purpose::STANDARD.decode(r).ok())
            .and_then(|r| String::from_utf8(r).ok())
            .unwrap_or_default();
        let usages: Vec<&str> = cur
            .pointer("/spec/usages")
            .and_then(Value::as_array)
            .map(|u| u.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let expiration = cur
            .pointer("/spec/expirationSeconds")
            .and_then(Value::as_u64);
        // As a client reads it (the store keeps managedFields compacted).
        let mut new = flotilla_store::compact::expanded(&cur).as_ref().clone();
        match self
            .signer
            .sign(&request, &usages, ttl(expiration), SystemTime::now())
        {
            Ok(Ok(pem)) => {
                new["status"]["certificate"] =
                    json!(base64::engine::general_purpose::STANDARD.encode(pem));
            }
            Ok(Err(refusal)) => {
                let condition = json!({"type": "Failed", "status": "True",
                    "reason": "SignerValidationFailure", "message": refusal,
                    "lastUpdateTime": flotilla_registry::meta::now()});
                match new["status"]["conditions"].as_array_mut() {
                    Some(conditions) => conditions.push(condition),
                    None => new["status"]["conditions"] = json!([condition]),
                }
            }
            Err(error) => {
                // A request that cannot be read cannot be signed until it changes; upstream retries it forever.
                tracing::warn!(csr = %key, %error, "failed to sign a certificate signing request");
                return Ok(Next::Done);
            }
        }
        let Some(info) = ctx
            .catalog
            .get("certificates.k8s.io", "v1", "certificatesigningrequests")
        else {
            return Ok(Next::Done);
        };
        // Through the status endpoint, as kube-controller-manager writes it (a conflict is retried).
        let opts = write::Options {
            dry_run: false,
            manager: "kube-controller-manager",
            validation: write::field_validation::Mode::Ignore,
            requester: None,
        };
        write::update(ctx, &info, "", key, new, Endpoint::Status, &opts).await?;
        Ok(Next::Done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer() -> Signer {
        let key = KeyPair::generate().expect("key");
        let mut params = rcgen::CertificateParams::default();
        params.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        Signer::new(Issuer::new(params, key))
    }

    fn request() -> String {
        let key = KeyPair::generate().expect("key");
        let mut params = rcgen::CertificateParams::default();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "system:karmada:agent:m1");
        params
            .serialize_request(&key)
            .expect("csr")
            .pem()
            .expect("pem")
    }

    #[test]
    fn client_requests_are_signed_for_their_ttl_and_other_usages_refused() {
        let now = SystemTime::now();
        let pem = signer()
            .sign(
                &request(),
                &["client auth", "digital signature"],
                ttl(Some(3600)),
                now,
            )
            .expect("parsed")
            .expect("signed");
        let (_, parsed) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).expect("pem");
        let cert = parsed.parse_x509().expect("certificate");
        let validity = cert.validity();
        assert_eq!(
            validity.not_after.timestamp() - validity.not_before.timestamp(),
            3900
        );
        let refused = signer()
            .sign(&request(), &["server auth"], ttl(None), now)
            .expect("parsed");
        assert_eq!(
            refused,
            Err("invalid usage for client certificate: server auth".to_string())
        );
        assert_eq!(ttl(Some(1)), MIN_TTL);
        assert_eq!(ttl(Some(u64::MAX)), MAX_TTL);
    }
}
