//! Per-pane output state, sans-IO: the byte history ([`ring`]).

pub mod ring;

pub use ring::{Read, Ring};
