//! `flotilla crds`: prints every CRD Flotilla needs as one YAML stream, the same content as `manifests/crds/`.

use std::io::Write;

use anyhow::Context;

/// Arguments of `flotilla crds` (none).
#[derive(Debug, Clone, clap::Args)]
pub struct Args {}

/// Writes the CRD stream to stdout.
///
/// # Errors
/// If a CRD cannot be rendered or stdout cannot be written (e.g. a closed pipe).
pub async fn run(_args: Args) -> anyhow::Result<()> {
    let stream = flotilla_api::crds::yaml_stream()?;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(stream.as_bytes())
        .and_then(|()| stdout.flush())
        .context("failed to write the CRDs to stdout")
}
