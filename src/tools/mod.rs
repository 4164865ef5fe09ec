//! The tool table. (In progress.)
