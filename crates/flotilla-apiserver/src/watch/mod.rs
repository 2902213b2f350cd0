//! Watch: the event hub with bounded history and the streaming watch handler (spec §8).

pub(crate) mod hub;
pub(crate) mod stream;
