//! The user layers' configuration, watched on the control plane: kube-runtime reflectors of
//! ResourceInterpreterCustomizations and ResourceInterpreterWebhookConfigurations feed the customization and
//! webhook layers.
//!
//! Guarantees:
//! - A sink always receives the full current list (Karmada rebuilds its caches from the whole list on every
//!   event), first after the initial list completed, then after every change.
//! - The readiness gate of a source opens only after its sink received the initial list, so the facade
//!   dispatches nothing before both user layers know every object that existed when it started.
//! - Watch errors are logged and retried with kube-runtime's default backoff; the sinks keep their last list.
//! - An object that does not decode (a field of another type that a CRD of another version let through) is
//!   reported ([`flotilla_client::lenient`]: a warning naming it and the field, and the hook the controllers set
//!   through [`ResourceInterpreter::report_undecodable_to`]) and left out, its last readable version kept: one
//!   bad object never keeps the interpreter from becoming ready.

use std::fmt::Debug;
use std::sync::Arc;

use flotilla_api::config::v1alpha1::{
    ResourceInterpreterCustomization, ResourceInterpreterWebhookConfiguration,
};
use flotilla_client::lenient::{Lenient, Reporter};
use futures::StreamExt;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher::{self, Event};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;

use crate::customization::CustomizationLayer;
use crate::facade::{Readiness, ReadyGate, ResourceInterpreter};
use crate::lua::{LuaVm, VmConfig};
use crate::thirdparty::ThirdPartyLayer;
use crate::webhook::WebhookLayer;

/// Name of the readiness gate of customizations.
pub const CUSTOMIZATIONS_GATE: &str = "customizations";
/// Name of the readiness gate of webhook configurations.
pub const WEBHOOKS_GATE: &str = "webhook configurations";

/// Takes the full current list of one kind of configuration object.
pub trait ConfigSink<K>: Send + Sync {
    /// Replaces everything the layer knew with `objects`.
    fn replace_all(&self, objects: Vec<K>);
}

impl<K, F> ConfigSink<K> for F
where
    F: Fn(Vec<K>) + Send + Sync,
{
    fn replace_all(&self, objects: Vec<K>) {
        self(objects);
    }
}

impl ConfigSink<ResourceInterpreterCustomization> for CustomizationLayer {
    fn replace_all(&self, objects: Vec<ResourceInterpreterCustomization>) {
        CustomizationLayer::replace_all(self, objects);
    }
}

impl ConfigSink<ResourceInterpreterWebhookConfiguration> for WebhookLayer {
    fn replace_all(&self, objects: Vec<ResourceInterpreterWebhookConfiguration>) {
        WebhookLayer::replace_all(self, objects);
    }
}

/// Adds the two gates to `readiness` and returns the reporters of objects that do not decode, and the future
/// that watches both kinds for ever, feeding `customizations` and `webhooks`. Spawn it; the interpreter becomes
/// ready once both initial lists arrived.
pub fn watch_configuration(
    client: kube::Client,
    readiness: &Readiness,
    customizations: Arc<dyn ConfigSink<ResourceInterpreterCustomization>>,
    webhooks: Arc<dyn ConfigSink<ResourceInterpreterWebhookConfiguration>>,
) -> (Vec<Arc<Reporter>>, impl Future<Output = ()> + Send + use<>) {
    let customization_gate = readiness.gate(CUSTOMIZATIONS_GATE);
    let webhook_gate = readiness.gate(WEBHOOKS_GATE);
    let ric_api: Api<Lenient<ResourceInterpreterCustomization>> =
        Api::all_with(client.clone(), &());
    let riwc_api: Api<Lenient<ResourceInterpreterWebhookConfiguration>> =
        Api::all_with(client, &());
    let ric_reporter = Arc::new(reporter::<ResourceInterpreterCustomization>());
    let riwc_reporter = Arc::new(reporter::<ResourceInterpreterWebhookConfiguration>());
    let reporters = vec![ric_reporter.clone(), riwc_reporter.clone()];
    let sync = async move {
        futures::join!(
            watch(ric_api, customizations, customization_gate, ric_reporter),
            watch(riwc_api, webhooks, webhook_gate, riwc_reporter),
        );
    };
    (reporters, sync)
}

fn reporter<K: Resource<DynamicType = ()>>() -> Reporter {
    Reporter::new(
        format!("interpreter: {}", K::plural(&())),
        K::api_version(&()),
        K::kind(&()),
        None,
    )
}

/// Watches one kind with a reflector and hands the sink the whole store after every change; objects that do not
/// decode go to `reporter`.
pub async fn watch<K>(
    api: Api<Lenient<K>>,
    sink: Arc<dyn ConfigSink<K>>,
    gate: ReadyGate,
    reporter: Arc<Reporter>,
) where
    K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let (store, mut writer) = reflector::store::<K>();
    let events = watcher::watcher(api, watcher::Config::default()).default_backoff();
    let mut events = std::pin::pin!(events);
    let mut listed = false;
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(event) => reporter.readable(event, |object| {
                let key = ObjectRef::new(object.meta.name.as_deref().unwrap_or_default());
                store.get(&key).map(|cached| cached.as_ref().clone())
            }),
            Err(error) => {
                tracing::warn!(source = gate.name(), %error, "watching interpreter configuration failed; retrying");
                continue;
            }
        };
        let Some(event) = event else { continue };
        writer.apply_watcher_event(&event);
        match event {
            Event::InitDone => {
                listed = true;
                sink.replace_all(snapshot(&store));
                gate.set_ready();
                tracing::debug!(
                    source = gate.name(),
                    objects = store.state().len(),
                    "interpreter configuration listed"
                );
            }
            // Until the initial list completed, the store may hold only part of it.
            Event::Apply(_) | Event::Delete(_) if listed => sink.replace_all(snapshot(&store)),
            _ => {}
        }
    }
}

fn snapshot<K: kube::Resource<DynamicType = ()> + Clone>(store: &reflector::Store<K>) -> Vec<K> {
    store
        .state()
        .iter()
        .map(|object| object.as_ref().clone())
        .collect()
}

/// A Lua VM with Karmada's budgets (1 s CPU per call) for one layer; each Lua layer has its own, as in Karmada.
fn lua_vm() -> LuaVm {
    LuaVm::new(VmConfig::default())
}

/// The layers the binary always has: the bundled third-party customizations and native.
pub fn bundled() -> crate::facade::Builder {
    ResourceInterpreter::builder()
        .layer(Arc::new(ThirdPartyLayer::new(lua_vm())))
        .native()
}

/// Only the given customizations, as `karmadactl interpret -f` resolves: no webhook, bundled or native layer.
pub fn customizations_only(
    customizations: &[ResourceInterpreterCustomization],
) -> crate::facade::Builder {
    ResourceInterpreter::builder().layer(Arc::new(CustomizationLayer::with_customizations(
        lua_vm(),
        customizations,
    )))
}

/// The interpreter as a control plane resolves it, every layer Flotilla has, with the user layers fed by the
/// control plane's ResourceInterpreterCustomizations and ResourceInterpreterWebhookConfigurations; and the
/// future that keeps them in sync (spawn it, abort it on shutdown). The interpreter becomes ready once both
/// initial lists arrived; callers await [`ResourceInterpreter::ready`].
///
/// # Errors
/// Only if the default metrics cannot be created (a bug).
pub fn control_plane(
    client: kube::Client,
) -> Result<
    (
        ResourceInterpreter,
        impl Future<Output = ()> + Send + 'static,
    ),
    prometheus::Error,
> {
    let readiness = Readiness::new();
    let customizations = Arc::new(CustomizationLayer::new(lua_vm()));
    let webhooks = Arc::new(WebhookLayer::new(Some(client.clone())));
    let customization_sink: Arc<dyn ConfigSink<ResourceInterpreterCustomization>> =
        customizations.clone();
    let webhook_sink: Arc<dyn ConfigSink<ResourceInterpreterWebhookConfiguration>> =
        webhooks.clone();
    let (reporters, sync) =
        watch_configuration(client, &readiness, customization_sink, webhook_sink);
    let interpreter = bundled()
        .layer(customizations)
        .layer(webhooks)
        .readiness(readiness)
        .reporters(reporters)
        .build()?;
    Ok((interpreter, sync))
}
