//! Agent Session Format files: the reference fixtures, broken input, the
//! appender.

mod fixtures;
mod robust;
mod rules;
mod write_props;
