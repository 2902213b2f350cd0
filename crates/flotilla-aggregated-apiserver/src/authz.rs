//! Authorization of `clusters/{name}/proxy`, delegated to the control plane with a SubjectAccessReview as the
//! delegating authorizer of every aggregated API server does it: the caller's user, uid, groups and extra;
//! group `cluster.karmada.io`, version `v1alpha1`, resource `clusters`, subresource `proxy`, the cluster's
//! name and kube's verb for the method. `system:masters` is allowed without asking (`AlwaysAllowGroups`), and
//! answers are cached for ten seconds, allowed and denied alike (the delegating authorizer's TTLs).
//!
//! The other requests need no review here: the pass-through impersonates the caller, so the control plane
//! authorizes them itself.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::PostParams;
use kube::{Api, Client};
use tokio::time::Instant;

use crate::error::RequestError;
use crate::names;
use crate::user::UserInfo;

/// How long an answer is reused.
const CACHE_TTL: Duration = Duration::from_secs(10);
/// At most this many answers are kept; a full cache is emptied.
const CACHE_CAPACITY: usize = 4096;

/// One question: who, which verb, which cluster.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Question {
    user: UserInfo,
    verb: String,
    cluster: String,
}

/// The control plane's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Answer {
    allowed: bool,
    reason: String,
}

/// Asks the control plane whether callers may use a cluster's proxy.
pub(crate) struct Authorizer {
    client: Client,
    cache: Mutex<HashMap<Question, (Answer, Instant)>>,
}

impl Authorizer {
    /// An authorizer asking through `client`.
    pub(crate) fn new(client: Client) -> Authorizer {
        Authorizer {
            client,
            cache: Mutex::default(),
        }
    }

    /// Whether `user` may `verb` the proxy of `cluster`.
    ///
    /// # Errors
    /// [`RequestError::Forbidden`] when denied; [`RequestError::ControlPlane`] when the review failed.
    pub(crate) async fn authorize_proxy(
        &self,
        user: &UserInfo,
        verb: &str,
        cluster: &str,
    ) -> Result<(), RequestError> {
        if user.in_group(names::MASTERS_GROUP) {
            return Ok(());
        }
        let question = Question {
            user: user.clone(),
            verb: verb.to_owned(),
            cluster: cluster.to_owned(),
        };
        let answer = match self.cached(&question) {
            Some(answer) => answer,
            None => {
                let answer = self.ask(&question).await?;
                self.remember(question, answer.clone());
                answer
            }
        };
        if answer.allowed {
            Ok(())
        } else {
            Err(RequestError::Forbidden {
                user: user.name.clone(),
                verb: verb.to_owned(),
                cluster: cluster.to_owned(),
                reason: answer.reason,
            })
        }
    }

    fn cached(&self, question: &Question) -> Option<Answer> {
        let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        cache
            .get(question)
            .filter(|(_, at)| at.elapsed() < CACHE_TTL)
            .map(|(answer, _)| answer.clone())
    }

    fn remember(&self, question: Question, answer: Answer) {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if cache.len() >= CACHE_CAPACITY {
            cache.clear();
        }
        cache.insert(question, (answer, Instant::now()));
    }

    async fn ask(&self, question: &Question) -> Result<Answer, RequestError> {
        let api: Api<SubjectAccessReview> = Api::all(self.client.clone());
        let review = review(&question.user, &question.verb, &question.cluster);
        let answered = api
            .create(&PostParams::default(), &review)
            .await
            .map_err(|source| RequestError::ControlPlane {
                action: format!(
                    "ask the control plane whether {:?} may {} clusters/{}/proxy",
                    question.user.name, question.verb, question.cluster
                ),
                source,
            })?;
        let status = answered.status.unwrap_or_default();
        // The delegating authorizer allows only an explicit allow; "no opinion" is a denial here.
        Ok(Answer {
            allowed: status.allowed && !status.denied.unwrap_or(false),
            reason: status.reason.unwrap_or_default(),
        })
    }
}

/// The SubjectAccessReview asking whether `user` may `verb` the proxy of `cluster`.
pub(crate) fn review(user: &UserInfo, verb: &str, cluster: &str) -> SubjectAccessReview {
    SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(user.name.clone()),
            uid: (!user.uid.is_empty()).then(|| user.uid.clone()),
            groups: (!user.groups.is_empty()).then(|| user.groups.clone()),
            extra: (!user.extra.is_empty()).then(|| user.extra.clone()),
            resource_attributes: Some(ResourceAttributes {
                group: Some(names::GROUP.to_owned()),
                version: Some(names::VERSION.to_owned()),
                resource: Some(names::RESOURCE.to_owned()),
                subresource: Some(names::PROXY.to_owned()),
                name: Some(cluster.to_owned()),
                verb: Some(verb.to_owned()),
                ..ResourceAttributes::default()
            }),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use http_body_util::BodyExt;
    use serde_json::{Value, json};

    use super::*;

    #[test]
    fn the_review_carries_the_caller_and_the_proxy_attributes() {
        let user = UserInfo {
            name: "tom".into(),
            uid: "u-7".into(),
            groups: vec!["devs".into(), "system:authenticated".into()],
            extra: [("scopes".to_owned(), vec!["a".to_owned()])].into(),
        };
        let body = serde_json::to_value(review(&user, "get", "member1")).expect("serializes");
        assert_eq!(
            body,
            json!({
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SubjectAccessReview",
                "metadata": {},
                "spec": {
                    "user": "tom",
                    "uid": "u-7",
                    "groups": ["devs", "system:authenticated"],
                    "extra": {"scopes": ["a"]},
                    "resourceAttributes": {
                        "group": "cluster.karmada.io",
                        "version": "v1alpha1",
                        "resource": "clusters",
                        "subresource": "proxy",
                        "name": "member1",
                        "verb": "get",
                    },
                },
            })
        );
    }

    #[test]
    fn a_user_without_uid_groups_or_extra_sends_none() {
        let user = UserInfo {
            name: "ann".into(),
            ..UserInfo::default()
        };
        let body = serde_json::to_value(review(&user, "create", "*")).expect("serializes");
        assert_eq!(
            body["spec"],
            json!({
                "user": "ann",
                "resourceAttributes": {
                    "group": "cluster.karmada.io",
                    "version": "v1alpha1",
                    "resource": "clusters",
                    "subresource": "proxy",
                    "name": "*",
                    "verb": "create",
                },
            })
        );
    }

    /// A control plane answering every SubjectAccessReview with `allowed` and `reason`, counting the reviews.
    fn control_plane(allowed: bool, reason: &'static str) -> (Client, Arc<AtomicUsize>) {
        let asked = Arc::new(AtomicUsize::new(0));
        let counter = asked.clone();
        let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                let body = request
                    .into_body()
                    .collect()
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                let mut review: Value = serde_json::from_slice(&body).unwrap_or_default();
                review["status"] = json!({"allowed": allowed, "reason": reason});
                Ok::<_, Infallible>(http::Response::new(review.to_string()))
            }
        });
        (Client::new(service, "default"), asked)
    }

    fn tom() -> UserInfo {
        UserInfo {
            name: "tom".into(),
            groups: vec!["devs".into()],
            ..UserInfo::default()
        }
    }

    #[tokio::test]
    async fn a_denial_is_kubes_forbidden_with_the_reason() {
        let (client, _) = control_plane(false, "no RBAC policy matched");
        let error = Authorizer::new(client)
            .authorize_proxy(&tom(), "get", "member1")
            .await
            .expect_err("denied");
        assert_eq!(
            error.to_string(),
            "clusters.cluster.karmada.io \"member1\" is forbidden: User \"tom\" cannot get resource \
             \"clusters/proxy\" in API group \"cluster.karmada.io\" at the cluster scope: no RBAC policy matched"
        );
    }

    #[tokio::test]
    async fn answers_are_cached_and_masters_are_not_asked() {
        let (client, asked) = control_plane(true, "");
        let authorizer = Authorizer::new(client);
        for _ in 0..3 {
            authorizer
                .authorize_proxy(&tom(), "get", "m1")
                .await
                .expect("allowed");
        }
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        authorizer
            .authorize_proxy(&tom(), "create", "m1")
            .await
            .expect("allowed");
        assert_eq!(
            asked.load(Ordering::SeqCst),
            2,
            "another verb is another question"
        );
        let admin = UserInfo {
            name: "admin".into(),
            groups: vec![names::MASTERS_GROUP.into()],
            ..UserInfo::default()
        };
        authorizer
            .authorize_proxy(&admin, "delete", "m9")
            .await
            .expect("allowed");
        assert_eq!(asked.load(Ordering::SeqCst), 2);
    }
}
