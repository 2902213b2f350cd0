//! Karmada's agent CSR approving controller (`--controllers` name `agentcsrapproving`, on by default): approves
//! the client certificate requests of Pull-mode agents, so that an agent registering with a bootstrap token
//! (`flotilla register`, `karmadactl register`) gets a certificate for `system:karmada:agent:<cluster>` in group
//! `system:karmada:agents` from the control plane's `kubernetes.io/kube-apiserver-client` signer, and can renew it
//! with that certificate.
//!
//! Each CSR for that signer that has no certificate and is neither approved nor denied is read ([`recognize`]):
//! an agent renewing its own certificate (the requester is the user the request names) is approved when the
//! requester may `create` `certificatesigningrequests/selfclusteragent`, any agent request when it may `create`
//! `certificatesigningrequests/clusteragent`, as a SubjectAccessReview for the CSR's requester (user, uid,
//! groups, extra) answers. Approval appends condition `Approved` (reason `AutoApproved`) through the `approval`
//! subresource. A request recognized but not allowed is logged as an error and left for a person to decide; one
//! that is not an agent's is left alone; one that cannot be parsed fails its reconcile until it changes.
//! Whoever signs approved requests (the embedded server's signer, kube-controller-manager's) issues the
//! certificate.

pub(crate) mod recognize;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use k8s_openapi::api::authorization::v1::{
    SubjectAccessReview, SubjectAccessReviewSpec, SubjectAccessReviewStatus,
};
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestCondition,
};
use kube::api::{Api, PostParams};
use kube::{Client, ResourceExt};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::runtime::{Action, Change, Controller, Informer};
use crate::shared::ControlPlane;
use recognize::{KUBE_APISERVER_CLIENT, Recognizer, Request};

/// Name of the controller (metrics, logs), as Karmada names it.
pub(crate) const NAME: &str = "agent-csr-approving-controller";

struct AgentCsrApproving {
    client: Client,
    csrs: Arc<Informer<CertificateSigningRequest>>,
}

/// Runs the controller until `shutdown` is cancelled.
pub(crate) async fn run(ctx: ControlPlane, shutdown: CancellationToken) {
    let controller = Arc::new(AgentCsrApproving {
        client: ctx.client.clone(),
        csrs: ctx.informers.typed(),
    });
    let runner = Controller::new(NAME, &controller.csrs, &ctx.runtime);
    // Only the client signer's requests: an agent's certificate is a client certificate of the control plane.
    runner.reconcile_changes(&controller.csrs, |change| {
        matches!(change, Change::Added(_) | Change::Updated { .. })
            && change.object().spec.signer_name == KUBE_APISERVER_CLIENT
    });
    runner
        .run(shutdown, controller, |controller, csr| async move {
            controller.reconcile(&csr.name_any()).await
        })
        .await;
}

/// What the requester of `csr` is, as the SubjectAccessReview asks it.
fn review_for(csr: &CertificateSigningRequest, recognizer: Recognizer) -> SubjectAccessReview {
    let spec = &csr.spec;
    SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: spec.username.clone(),
            uid: spec.uid.clone(),
            groups: spec.groups.clone(),
            extra: spec.extra.clone(),
            resource_attributes: Some(recognizer.permission()),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    }
}

/// `csr` with the approval of `recognizer` appended to its conditions.
fn approved(
    mut csr: CertificateSigningRequest,
    recognizer: Recognizer,
) -> CertificateSigningRequest {
    csr.status
        .get_or_insert_with(Default::default)
        .conditions
        .get_or_insert_with(Vec::new)
        .push(CertificateSigningRequestCondition {
            type_: "Approved".to_owned(),
            status: "True".to_owned(),
            reason: Some("AutoApproved".to_owned()),
            message: Some(recognizer.message().to_owned()),
            ..CertificateSigningRequestCondition::default()
        });
    csr
}

impl AgentCsrApproving {
    async fn reconcile(&self, name: &str) -> Result<Action> {
        let Some(csr) = self.csrs.get("", name) else {
            return Ok(Action::await_change());
        };
        if csr.metadata.deletion_timestamp.is_some() || !recognize::undecided(&csr) {
            return Ok(Action::await_change());
        }
        let what = format!("CertificateSigningRequest {name}");
        // The request is immutable: one that cannot be read waits for the CSR to be replaced.
        let request = recognize::parse(&csr.spec.request.0)
            .map_err(|reason| Error::invalid(&what, format!("unable to parse csr: {reason}")))?;
        let mut tried = Vec::new();
        for recognizer in recognizers_for(&csr, &request) {
            tried.push(recognizer.subresource());
            if self.authorize(&csr, recognizer, &what).await? {
                self.approve(&csr, recognizer, &what).await?;
                tracing::info!(csr = name, kind = ?recognizer, "approved the agent's certificate request");
                return Ok(Action::await_change());
            }
        }
        if !tried.is_empty() {
            // Not a failure to retry: the request waits for a person's decision, or for a change to it.
            tracing::error!(
                csr = name,
                subresources = ?tried,
                "recognized an agent's certificate request, but the SubjectAccessReview did not allow its requester to have it approved"
            );
        }
        Ok(Action::await_change())
    }

    /// Whether the CSR's requester has the permission `recognizer` asks for.
    async fn authorize(
        &self,
        csr: &CertificateSigningRequest,
        recognizer: Recognizer,
        what: &str,
    ) -> Result<bool> {
        let reviews: Api<SubjectAccessReview> = Api::all(self.client.clone());
        let review = reviews
            .create(&PostParams::default(), &review_for(csr, recognizer))
            .await
            .map_err(|e| Error::kube("create", format!("SubjectAccessReview for {what}"), e))?;
        Ok(review
            .status
            .as_ref()
            .is_some_and(|s: &SubjectAccessReviewStatus| s.allowed))
    }

    /// Approves the CSR through its `approval` subresource. The object carries the cached resourceVersion, so a
    /// CSR decided meanwhile is not approved twice: the conflict is retried against the newer object.
    async fn approve(
        &self,
        csr: &CertificateSigningRequest,
        recognizer: Recognizer,
        what: &str,
    ) -> Result<()> {
        let api: Api<CertificateSigningRequest> = Api::all(self.client.clone());
        let name = csr.name_any();
        api.replace_subresource(
            "approval",
            &name,
            &PostParams::default(),
            &approved(csr.clone(), recognizer),
        )
        .await
        .map_err(|e| Error::kube("update approval of", what.to_owned(), e))?;
        Ok(())
    }
}

/// The recognizers that recognize `csr`, in order.
fn recognizers_for(csr: &CertificateSigningRequest, request: &Request) -> Vec<Recognizer> {
    Recognizer::ALL
        .into_iter()
        .filter(|r| r.recognizes(&csr.spec, request))
        .collect()
}
