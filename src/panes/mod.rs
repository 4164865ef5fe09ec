//! Per-pane output state, sans-IO: the byte history ([`ring`]) and the
//! escape-stripped line view that matchers read ([`lines`]).

pub mod lines;
pub mod matcher;
pub mod registry;
pub mod ring;

pub use lines::LineView;
pub use ring::{Read, Ring};
