//! Reading GPU data back to the CPU.

#[cfg(not(target_arch = "wasm32"))]
mod stages;
