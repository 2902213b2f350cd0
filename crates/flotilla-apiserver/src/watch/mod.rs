//! Watch: the event hub with bounded history and the streaming watch handler (spec §8).

pub mod hub;
pub mod stream;
