//! Small helpers over kube's typed API used by every controller.

use std::fmt::Debug;

use flotilla_client::api_error::is_not_found;
use kube::{Api, Resource};
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// GET that maps NotFound to `None`.
///
/// # Errors
/// `Kube` for every other failure.
pub(crate) async fn get_opt<K>(api: Api<K>, name: &str) -> Result<Option<K>>
where
    K: Resource + Clone + DeserializeOwned + Debug,
    K::DynamicType: Default,
{
    match api.get(name).await {
        Ok(obj) => Ok(Some(obj)),
        Err(err) if is_not_found(&err) => Ok(None),
        Err(source) => Err(Error::kube(
            "get",
            format!("{} {name}", K::kind(&Default::default())),
            source,
        )),
    }
}
