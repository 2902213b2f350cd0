//! Kubernetes admission webhooks (AdmissionReview `admission.k8s.io/v1`), as kube-apiserver calls them: an
//! [`AdmissionHandler`] turned into an axum router by [`admission_router`], served over TLS with
//! [`crate::serve_tls`] like the interpreter webhooks.
//!
//! Guarantees: every request gets HTTP 200 with an `AdmissionReview` body, as controller-runtime's webhook server
//! answers. A request that cannot be read (empty or oversized body, wrong content type, not an `AdmissionReview`
//! v1 with a request) gets a response denied with code 400 and no uid, which the API server treats as a failed
//! call (the webhook's `failurePolicy` decides).

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::IntoResponse;
use base64::Engine as _;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview};
use kube::core::{DynamicObject, Status};
use serde_json::Value;

/// The largest AdmissionReview read: an object and its old version, each up to etcd's 1.5 MiB, with room.
pub const MAX_REVIEW_BYTES: usize = 8 << 20;

/// Decides admission requests.
pub trait AdmissionHandler: Send + Sync + 'static {
    /// Answers one request; the response carries the request's uid (build it with
    /// `AdmissionResponse::from(&request)`).
    fn review(
        &self,
        request: AdmissionRequest<DynamicObject>,
    ) -> impl Future<Output = AdmissionResponse> + Send;
}

impl<F, Fut> AdmissionHandler for F
where
    F: Fn(AdmissionRequest<DynamicObject>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = AdmissionResponse> + Send,
{
    fn review(
        &self,
        request: AdmissionRequest<DynamicObject>,
    ) -> impl Future<Output = AdmissionResponse> + Send {
        self(request)
    }
}

/// An axum router serving `handler` on `path` (POST).
pub fn admission_router<H: AdmissionHandler>(path: &str, handler: H) -> Router {
    Router::new()
        .route(path, axum::routing::post(serve_review::<H>))
        .with_state(Arc::new(handler))
}

/// The status of a request refused before its handler saw it, as controller-runtime's `Errored(400)`.
fn bad_request(message: &str) -> Status {
    Status::failure(message, "").with_code(400)
}

async fn serve_review<H: AdmissionHandler>(
    State(handler): State<Arc<H>>,
    headers: HeaderMap,
    body: Body,
) -> axum::response::Response {
    let review = match decode(&headers, body).await {
        Ok(request) => handler.review(request).await.into_review(),
        Err(message) => {
            let mut response = AdmissionResponse::invalid(&message);
            response.result = bad_request(&message);
            response.into_review()
        }
    };
    axum::Json(with_base64_patch(review)).into_response()
}

/// The review as Go webhooks write it: kube's types write the patch as an array of byte values, which Go's
/// decoders accept, but the wire format is base64 text.
fn with_base64_patch(review: AdmissionReview<DynamicObject>) -> Value {
    let mut value = match serde_json::to_value(&review) {
        Ok(value) => value,
        Err(error) => return serde_json::json!({"error": error.to_string()}),
    };
    if let Some(patch) = value.pointer_mut("/response/patch")
        && let Some(items) = patch.as_array()
    {
        let bytes: Option<Vec<u8>> = items
            .iter()
            .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
            .collect();
        if let Some(bytes) = bytes {
            *patch = Value::String(base64::engine::general_purpose::STANDARD.encode(bytes));
        }
    }
    value
}

/// Reads the request of an AdmissionReview, or why it cannot be read.
async fn decode(
    headers: &HeaderMap,
    body: Body,
) -> Result<AdmissionRequest<DynamicObject>, String> {
    let body = axum::body::to_bytes(body, MAX_REVIEW_BYTES)
        .await
        .map_err(|error| {
            format!("failed to read the request body (at most {MAX_REVIEW_BYTES} bytes): {error}")
        })?;
    if body.is_empty() {
        return Err("request body is empty".to_owned());
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .map(|value| String::from_utf8_lossy(value.as_bytes()));
    if content_type.as_deref() != Some("application/json") {
        let shown = content_type.unwrap_or_default();
        return Err(format!("contentType={shown}, expected application/json"));
    }
    let review: AdmissionReview<DynamicObject> = serde_json::from_slice(&body)
        .map_err(|error| format!("failed to decode the AdmissionReview: {error}"))?;
    review
        .try_into()
        .map_err(|_| "the AdmissionReview has no request".to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use axum::http::Request;
    use serde_json::{Value, json};
    use tower::ServiceExt;

    use super::*;

    fn review(operation: &str) -> Value {
        json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": "0b7d3f7c-1", "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "resource": {"group": "", "version": "v1", "resource": "configmaps"},
                "name": "cm", "namespace": "default", "operation": operation, "userInfo": {},
                "oldObject": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}
            }
        })
    }

    async fn post(router: Router, content_type: &str, body: String) -> Value {
        let request = Request::post("/validate")
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(body))
            .unwrap();
        let response = router.oneshot(request).await.unwrap();
        assert_eq!(response.status(), 200);
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    fn deny_deletes() -> Router {
        admission_router(
            "/validate",
            |request: AdmissionRequest<DynamicObject>| async move {
                if request.operation == kube::core::admission::Operation::Delete {
                    let mut response = AdmissionResponse::from(&request).deny("no deletes");
                    response.result = Status::failure("no deletes", "Forbidden").with_code(403);
                    response
                } else {
                    AdmissionResponse::from(&request)
                }
            },
        )
    }

    #[tokio::test]
    async fn a_patch_is_sent_as_base64() {
        let router = admission_router(
            "/validate",
            |request: AdmissionRequest<DynamicObject>| async move {
                let patch: json_patch::Patch =
                    serde_json::from_value(json!([{"op": "add", "path": "/a", "value": 1}]))
                        .unwrap();
                AdmissionResponse::from(&request).with_patch(patch).unwrap()
            },
        );
        let body = post(router, "application/json", review("CREATE").to_string()).await;
        let encoded = body["response"]["patch"].as_str().unwrap();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&decoded).unwrap(),
            json!([{"op": "add", "path": "/a", "value": 1}])
        );
        assert_eq!(body["response"]["patchType"], "JSONPatch");
    }

    #[tokio::test]
    async fn answers_with_the_uid_and_the_handlers_decision() {
        let body = post(
            deny_deletes(),
            "application/json",
            review("DELETE").to_string(),
        )
        .await;
        assert_eq!(body["apiVersion"], "admission.k8s.io/v1");
        assert_eq!(body["kind"], "AdmissionReview");
        let response = &body["response"];
        assert_eq!(response["uid"], "0b7d3f7c-1");
        assert_eq!(response["allowed"], false);
        assert_eq!(response["status"]["code"], 403);
        assert_eq!(response["status"]["reason"], "Forbidden");
        assert_eq!(response["status"]["message"], "no deletes");

        let body = post(
            deny_deletes(),
            "application/json",
            review("UPDATE").to_string(),
        )
        .await;
        assert_eq!(body["response"]["allowed"], true);
        assert_eq!(body["response"]["uid"], "0b7d3f7c-1");
    }

    #[tokio::test]
    async fn unreadable_requests_are_refused_without_a_uid() {
        for (content_type, body, expected) in [
            ("application/json", String::new(), "request body is empty"),
            (
                "text/plain",
                review("DELETE").to_string(),
                "contentType=text/plain",
            ),
            (
                "application/json",
                "{".to_owned(),
                "failed to decode the AdmissionReview",
            ),
            (
                "application/json",
                json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}).to_string(),
                "the AdmissionReview has no request",
            ),
        ] {
            let body = post(deny_deletes(), content_type, body).await;
            let response = &body["response"];
            assert_eq!(response["allowed"], false, "{body}");
            assert_eq!(response["uid"], "", "{body}");
            assert_eq!(response["status"]["code"], 400, "{body}");
            let message = response["status"]["message"].as_str().unwrap();
            assert!(message.starts_with(expected), "{message}");
        }
    }
}
