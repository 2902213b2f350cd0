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

use std::fmt::Debug;
use std::sync::Arc;

use flotilla_api::config::v1alpha1::{
    ResourceInterpreterCustomization, ResourceInterpreterWebhookConfiguration,
};
use futures::{StreamExt, TryStreamExt};
use kube::Api;
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, reflector};
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

/// Adds the two gates to `readiness` and returns the future that watches both kinds for ever, feeding
/// `customizations` and `webhooks`. Spawn it; the interpreter becomes ready once both initial lists arrived.
pub fn watch_configuration(
    client: kube::Client,
    readiness: &Readiness,
    customizations: Arc<dyn ConfigSink<ResourceInterpreterCustomization>>,
    webhooks: Arc<dyn ConfigSink<ResourceInterpreterWebhookConfiguration>>,
) -> impl Future<Output = ()> + Send + use<> {
    let customization_gate = readiness.gate(CUSTOMIZATIONS_GATE);
    let webhook_gate = readiness.gate(WEBHOOKS_GATE);
    let ric_api: Api<ResourceInterpreterCustomization> = Api::all(client.clone());
    let riwc_api: Api<ResourceInterpreterWebhookConfiguration> = Api::all(client);
    async move {
        futures::join!(
            watch(ric_api, customizations, customization_gate),
            watch(riwc_api, webhooks, webhook_gate),
        );
    }
}

/// Watches one kind with a reflector and hands the sink the whole store after every change.
pub async fn watch<K>(api: Api<K>, sink: Arc<dyn ConfigSink<K>>, gate: ReadyGate)
where
    K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let (store, writer) = reflector::store();
    let events = reflector(writer, watcher(api)).default_backoff();
    let mut events = std::pin::pin!(events.into_stream());
    let mut listed = false;
    while let Some(event) = events.next().await {
        match event {
            Ok(Event::InitDone) => {
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
            Ok(Event::Apply(_) | Event::Delete(_)) if listed => sink.replace_all(snapshot(&store)),
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(source = gate.name(), %error, "watching interpreter configuration failed; retrying")
            }
        }
    }
}

fn watcher<K>(api: Api<K>) -> impl futures::Stream<Item = watcher::Result<Event<K>>> + Send
where
    K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + 'static,
{
    watcher::watcher(api, watcher::Config::default())
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
    let sync = watch_configuration(client, &readiness, customization_sink, webhook_sink);
    let interpreter = bundled()
        .layer(customizations)
        .layer(webhooks)
        .readiness(readiness)
        .build()?;
    Ok((interpreter, sync))
}
