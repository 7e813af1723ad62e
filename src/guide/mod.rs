//! The guide: how to embed the library, how a frame flows, state machines, testing, compression, performance, and
//! the crowd demo and the tools. Each page is a Markdown file beside this one (`src/guide/`),
//! readable on its own too; dated benchmark runs are in `benches/results/`.

#[doc = include_str!("embedding.md")]
pub mod embedding {}

#[doc = include_str!("architecture.md")]
pub mod architecture {}

#[doc = include_str!("state_machines.md")]
pub mod state_machines {}

#[doc = include_str!("testing.md")]
pub mod testing {}

#[doc = include_str!("compression.md")]
pub mod compression {}

#[doc = include_str!("performance.md")]
pub mod performance {}

#[doc = include_str!("demo.md")]
pub mod demo {}
