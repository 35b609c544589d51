//! OpenHands SDK conversation directories (seed 000).

pub mod view;
