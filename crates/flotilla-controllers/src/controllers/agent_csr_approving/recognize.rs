//! Which CertificateSigningRequests are a Karmada agent's, read from the PEM request and the CSR's spec, and
//! what the requester must be allowed for each kind to be approved. Pure: the controller asks the API server
//! the SubjectAccessReview.

use std::collections::BTreeSet;

use k8s_openapi::api::authorization::v1::ResourceAttributes;
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestSpec,
};
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::cri_attributes::ParsedCriAttribute;
use x509_parser::extensions::{GeneralName, ParsedExtension};
use x509_parser::oid_registry::OID_X509_EXT_SUBJECT_ALT_NAME;
use x509_parser::prelude::FromDer;

/// The signer of every client certificate of the control plane, the agent's among them.
pub(crate) const KUBE_APISERVER_CLIENT: &str = "kubernetes.io/kube-apiserver-client";
/// The one organization of an agent's certificate: the group every agent is in.
pub(crate) const AGENT_GROUP: &str = "system:karmada:agents";
/// The prefix of an agent's user name; the cluster's name follows it.
pub(crate) const AGENT_USER_PREFIX: &str = "system:karmada:agent:";

const DIGITAL_SIGNATURE: &str = "digital signature";
const KEY_ENCIPHERMENT: &str = "key encipherment";
const CLIENT_AUTH: &str = "client auth";

/// What the recognizers read from a PEM certificate request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Request {
    /// The subject's common name (the last one, should there be several, as Go's `pkix.Name` reads it).
    pub common_name: String,
    /// The subject's organizations, in order.
    pub organizations: Vec<String>,
    /// The subject alternative names asked for, by kind.
    pub dns_names: usize,
    pub email_addresses: usize,
    pub ip_addresses: usize,
    pub uris: usize,
}

/// Reads the first PEM block of `pem`, which must be a `CERTIFICATE REQUEST`.
///
/// # Errors
/// A message saying what is wrong, when the block is missing, of another type, or not a parsable request.
pub(crate) fn parse(pem: &[u8]) -> Result<Request, String> {
    let block = match x509_parser::pem::parse_x509_pem(pem) {
        Ok((_, block)) if block.label == "CERTIFICATE REQUEST" => block,
        _ => return Err("PEM block type must be CERTIFICATE REQUEST".to_owned()),
    };
    let (_, request) =
        X509CertificationRequest::from_der(&block.contents).map_err(|e| e.to_string())?;
    let subject = &request.certification_request_info.subject;
    let text = |attr: &x509_parser::x509::AttributeTypeAndValue<'_>| {
        attr.as_str()
            .map(str::to_owned)
            .map_err(|e| format!("unreadable subject attribute: {e}"))
    };
    let mut parsed = Request {
        common_name: match subject.iter_common_name().last() {
            Some(cn) => text(cn)?,
            None => String::new(),
        },
        organizations: subject
            .iter_organization()
            .map(text)
            .collect::<Result<_, _>>()?,
        ..Request::default()
    };
    // Only the subjectAltName extension is read, as Go's parser does; others do not make a request unreadable.
    let extensions = request
        .certification_request_info
        .iter_attributes()
        .filter_map(|attr| match attr.parsed_attribute() {
            ParsedCriAttribute::ExtensionRequest(req) => Some(req.extensions.iter()),
            _ => None,
        })
        .flatten()
        .filter(|ext| ext.oid == OID_X509_EXT_SUBJECT_ALT_NAME);
    for extension in extensions {
        let ParsedExtension::SubjectAlternativeName(san) = extension.parsed_extension() else {
            return Err("unreadable subjectAltName extension".to_owned());
        };
        for name in &san.general_names {
            match name {
                GeneralName::DNSName(_) => parsed.dns_names += 1,
                GeneralName::RFC822Name(_) => parsed.email_addresses += 1,
                GeneralName::IPAddress(_) => parsed.ip_addresses += 1,
                GeneralName::URI(_) => parsed.uris += 1,
                GeneralName::Invalid(..) => {
                    return Err("invalid name in the subjectAltName extension".to_owned());
                }
                _ => {}
            }
        }
    }
    Ok(parsed)
}

/// Why a request is not an agent's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NotAgent {
    #[error("subject organization is not system:karmada:agents")]
    Organization,
    #[error("DNS subjectAltNames are not allowed")]
    DnsNames,
    #[error("email subjectAltNames are not allowed")]
    EmailAddresses,
    #[error("IP subjectAltNames are not allowed")]
    IpAddresses,
    #[error("URI subjectAltNames are not allowed")]
    Uris,
    #[error("subject common name does not begin with system:karmada:agent: prefix")]
    CommonName,
    #[error("usages did not match [client auth digital signature key encipherment]")]
    Usages,
}

/// Whether `request`, asking for `usages`, is what an agent asks for: organization exactly
/// `system:karmada:agents`, no subject alternative names, a `system:karmada:agent:` user, and the usages of a
/// client certificate (with or without key encipherment). Checked in this order, so the first failure is named.
pub(crate) fn validate_agent(request: &Request, usages: &[String]) -> Result<(), NotAgent> {
    if request.organizations != [AGENT_GROUP] {
        return Err(NotAgent::Organization);
    }
    if request.dns_names > 0 {
        return Err(NotAgent::DnsNames);
    }
    if request.email_addresses > 0 {
        return Err(NotAgent::EmailAddresses);
    }
    if request.ip_addresses > 0 {
        return Err(NotAgent::IpAddresses);
    }
    if request.uris > 0 {
        return Err(NotAgent::Uris);
    }
    if !request.common_name.starts_with(AGENT_USER_PREFIX) {
        return Err(NotAgent::CommonName);
    }
    // A set: a usage named twice counts once.
    let asked: BTreeSet<&str> = usages.iter().map(String::as_str).collect();
    let with_key = BTreeSet::from([DIGITAL_SIGNATURE, KEY_ENCIPHERMENT, CLIENT_AUTH]);
    let without_key = BTreeSet::from([DIGITAL_SIGNATURE, CLIENT_AUTH]);
    if asked != with_key && asked != without_key {
        return Err(NotAgent::Usages);
    }
    Ok(())
}

/// Whether the CSR is an agent's certificate request to the client signer (a new agent's, posted with its
/// bootstrap token).
fn is_agent(spec: &CertificateSigningRequestSpec, request: &Request) -> bool {
    spec.signer_name == KUBE_APISERVER_CLIENT
        && validate_agent(request, spec.usages.as_deref().unwrap_or_default()).is_ok()
}

/// Whether the CSR is an agent renewing its own certificate: an agent's request posted by the user it names.
fn is_self_agent(spec: &CertificateSigningRequestSpec, request: &Request) -> bool {
    spec.username.as_deref() == Some(request.common_name.as_str()) && is_agent(spec, request)
}

/// The kinds of agent request, in the order they are tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Recognizer {
    /// An agent renewing its own certificate.
    SelfAgent,
    /// An agent's first certificate, posted with a bootstrap token.
    Agent,
}

impl Recognizer {
    /// Every recognizer, in the order they are tried: a renewal is approved on the narrower permission first.
    pub(crate) const ALL: [Recognizer; 2] = [Recognizer::SelfAgent, Recognizer::Agent];

    /// Whether the CSR is of this kind.
    pub(crate) fn recognizes(
        self,
        spec: &CertificateSigningRequestSpec,
        request: &Request,
    ) -> bool {
        match self {
            Recognizer::SelfAgent => is_self_agent(spec, request),
            Recognizer::Agent => is_agent(spec, request),
        }
    }

    /// The subresource of `certificatesigningrequests` whose `create` the requester needs.
    pub(crate) fn subresource(self) -> &'static str {
        match self {
            Recognizer::SelfAgent => "selfclusteragent",
            Recognizer::Agent => "clusteragent",
        }
    }

    /// What the requester must be allowed for the CSR to be approved.
    pub(crate) fn permission(self) -> ResourceAttributes {
        ResourceAttributes {
            group: Some("certificates.k8s.io".to_owned()),
            resource: Some("certificatesigningrequests".to_owned()),
            subresource: Some(self.subresource().to_owned()),
            verb: Some("create".to_owned()),
            version: Some("*".to_owned()),
            ..ResourceAttributes::default()
        }
    }

    /// The message of the Approved condition.
    pub(crate) fn message(self) -> &'static str {
        match self {
            Recognizer::SelfAgent => {
                "Auto approving self karmada agent certificate after SubjectAccessReview."
            }
            Recognizer::Agent => {
                "Auto approving karmada agent certificate after SubjectAccessReview."
            }
        }
    }
}

/// Whether the CSR still waits for a decision: for the client signer, without a certificate, and neither
/// approved nor denied (a condition of either type counts: the API server accepts them only with status True).
pub(crate) fn undecided(csr: &CertificateSigningRequest) -> bool {
    let status = csr.status.as_ref();
    csr.spec.signer_name == KUBE_APISERVER_CLIENT
        && status
            .and_then(|s| s.certificate.as_ref())
            .is_none_or(|c| c.0.is_empty())
        && !status
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .any(|c| c.type_ == "Approved" || c.type_ == "Denied")
}
