//! What the servers the control plane's API server calls have in common (karmada-webhook's validations and the
//! aggregated `cluster.karmada.io` API): a serving certificate read from a directory, and the two ways to say
//! where the API server reaches them, a URL or a Service.

use std::path::Path;

use anyhow::{Context, bail};
use flotilla_webhook::TlsIdentity;

/// The serving certificate's file names in a `--*-cert-dir` (Karmada's defaults of `--tls-cert-file-name` and
/// `--tls-private-key-file-name`).
const CERT_FILE: &str = "tls.crt";
const KEY_FILE: &str = "tls.key";

/// The serving certificate `DIR/tls.crt` and its key `DIR/tls.key` of the server `what`.
///
/// # Errors
/// When either file cannot be read or parsed.
fn read_identity(dir: &Path, what: &str) -> anyhow::Result<TlsIdentity> {
    TlsIdentity::from_files(&dir.join(CERT_FILE), &dir.join(KEY_FILE)).with_context(|| {
        format!(
            "failed to read the {what}'s serving certificate in {}",
            dir.display()
        )
    })
}

/// The certificate flags of one server, `--<prefix>-cert-dir`, `--<prefix>-self-signed` and
/// `--<prefix>-ca-bundle`, as given.
pub(crate) struct CertificateFlags<'a> {
    /// The flags' prefix (`webhook`, `aggregated-apiserver`), for messages.
    pub prefix: &'a str,
    /// What the server is called in messages (`webhook`, `aggregated API server`).
    pub what: &'a str,
    /// `--<prefix>-cert-dir`.
    pub cert_dir: Option<&'a Path>,
    /// `--<prefix>-self-signed`.
    pub self_signed: bool,
    /// `--<prefix>-ca-bundle`.
    pub ca_bundle: Option<&'a Path>,
}

/// A serving certificate, with the CA bundle to register for it when one is known.
pub(crate) struct Certificate {
    /// The certificate and key.
    pub identity: TlsIdentity,
    /// The CA bundle (PEM): the file given, else the generated CA, else none.
    pub ca_bundle: Option<Vec<u8>>,
}

impl CertificateFlags<'_> {
    /// The certificate the flags name: read from the directory, or generated at start for `hosts`.
    ///
    /// # Errors
    /// When neither is asked for, or a file cannot be read or a certificate generated.
    pub(crate) fn certificate(&self, hosts: &[&str]) -> anyhow::Result<Certificate> {
        let (identity, generated_ca) = match (self.cert_dir, self.self_signed) {
            (Some(dir), _) => (read_identity(dir, self.what)?, None),
            (None, true) => {
                let generated =
                    flotilla_webhook::generate_self_signed(hosts).with_context(|| {
                        format!("failed to generate the {}'s serving certificate", self.what)
                    })?;
                let ca = generated.ca_bundle().to_vec();
                (generated.identity, Some(ca))
            }
            (None, false) => bail!(
                "--{prefix}-addr needs a serving certificate: --{prefix}-cert-dir or --{prefix}-self-signed",
                prefix = self.prefix
            ),
        };
        let ca_bundle = match self.ca_bundle {
            Some(file) => Some(std::fs::read(file).with_context(|| {
                format!(
                    "failed to read --{}-ca-bundle {}",
                    self.prefix,
                    file.display()
                )
            })?),
            None => generated_ca,
        };
        Ok(Certificate {
            identity,
            ca_bundle,
        })
    }
}

/// A Service of the control plane, `NAMESPACE/NAME[:PORT]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ServiceRef {
    pub namespace: String,
    pub name: String,
    pub port: Option<i32>,
}

impl ServiceRef {
    /// Reads `NAMESPACE/NAME[:PORT]`, the value of `flag`.
    ///
    /// # Errors
    /// When the text has another shape, naming `flag`.
    pub(crate) fn parse(text: &str, flag: &str) -> anyhow::Result<ServiceRef> {
        let invalid = || format!("{flag} {text:?} is not NAMESPACE/NAME[:PORT]");
        let (namespace, rest) = text.split_once('/').with_context(invalid)?;
        let (name, port) = match rest.split_once(':') {
            Some((name, port)) => (name, Some(port.parse::<i32>().ok().with_context(invalid)?)),
            None => (rest, None),
        };
        if namespace.is_empty() || name.is_empty() {
            bail!(invalid());
        }
        Ok(ServiceRef {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            port,
        })
    }
}

/// The host name an API server verifies the serving certificate of a server behind Service `namespace/name`
/// against: `<name>.<namespace>.svc`.
pub(crate) fn service_host(namespace: &str, name: &str) -> String {
    format!("{name}.{namespace}.svc")
}

/// The host (without IPv6 brackets) and port (443 when absent) of an `https://` URL, the value of `flag`.
///
/// # Errors
/// When the text is not an `https://` URL with a host, naming `flag`.
pub(crate) fn https_host_port(url: &str, flag: &str) -> anyhow::Result<(String, u16)> {
    let uri: http::Uri = url
        .parse()
        .with_context(|| format!("{flag} {url:?} is not a URL"))?;
    if uri.scheme_str() != Some("https") {
        bail!("{flag} {url:?} must be an https:// URL");
    }
    let host = uri
        .host()
        .filter(|host| !host.is_empty())
        .with_context(|| format!("{flag} {url:?} has no host"))?;
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    Ok((host, uri.port_u16().unwrap_or(443)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn services_parse() {
        let parsed = ServiceRef::parse("karmada-system/karmada-webhook:8443", "--x");
        assert_eq!(
            parsed.ok(),
            Some(ServiceRef {
                namespace: "karmada-system".into(),
                name: "karmada-webhook".into(),
                port: Some(8443)
            })
        );
        let parsed = ServiceRef::parse("karmada-system/karmada-webhook", "--x").ok();
        assert_eq!(parsed.as_ref().and_then(|s| s.port), None);
        assert_eq!(
            parsed
                .map(|s| service_host(&s.namespace, &s.name))
                .as_deref(),
            Some("karmada-webhook.karmada-system.svc")
        );
        for bad in ["karmada-webhook", "/x", "ns/", "ns/x:port"] {
            let err = ServiceRef::parse(bad, "--x-service").unwrap_err();
            assert!(format!("{err}").contains("--x-service"), "{bad}: {err}");
        }
    }

    #[test]
    fn urls_give_host_and_port() {
        assert_eq!(
            https_host_port("https://127.0.0.1:8444", "--x").ok(),
            Some(("127.0.0.1".to_owned(), 8444))
        );
        assert_eq!(
            https_host_port("https://[::1]", "--x").ok(),
            Some(("::1".to_owned(), 443))
        );
        for bad in ["http://127.0.0.1:1", "not a url", "https://"] {
            let err = https_host_port(bad, "--x-url").unwrap_err();
            assert!(format!("{err}").contains("--x-url"), "{bad}: {err}");
        }
    }
}
