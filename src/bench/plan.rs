//! The weight of a whole bench run, step by step, for its progress's estimate of the time left
//! ([`super::progress`]): each table weighed only when the run makes it.

use super::progress::{Kind, weight};
use super::{ClipFormat, Config, PathKind, machines, rows, threads_to_run};

/// The weight of every step `config` asks of `device`, for the estimate of the time left
/// ([`super::progress`]).
pub(super) fn plan_weight(device: &wgpu::Device, config: &Config) -> f64 {
    let ways = threads_to_run(device, config).len() as f64;
    let frames = config.frames;
    let extra =
        |kind: Kind, frames: u32| -> f64 { config.extra_counts().iter().map(|&n| weight(kind, n, frames)).sum() };
    // Each table weighed only when the run makes it (the conditions of `compare_all_formats`,
    // `compare_all_paths`, `compare_all_machines`, `compare_all_transitions` and `compare_each`).
    let staged = config.paths.contains(&PathKind::GpuStaged);
    let fused = config.paths.contains(&PathKind::GpuFused);
    let timestamps = device.features().contains(wgpu::Features::TIMESTAMP_QUERY);
    let both_formats =
        config.clip_formats.contains(&ClipFormat::Raw) && config.clip_formats.contains(&ClipFormat::Compressed);
    let workloads = config.workloads.len() as f64;
    let formats_tables = if staged && timestamps && both_formats {
        workloads * ways
    } else {
        0.0
    };
    let paths_tables = if staged && fused && timestamps {
        workloads * config.clip_formats.len() as f64 * ways
    } else {
        0.0
    };
    let machines_tables = (machines::machine_paths(device, config).len() * config.clip_formats.len()) as f64 * ways;
    let transitions = if config.transitions && staged {
        extra(Kind::Transitions, frames + 30)
    } else {
        0.0
    };
    let drawn = if staged {
        f64::from(u8::from(config.skinning) + u8::from(config.morph)) * extra(Kind::Drawn, frames)
    } else {
        0.0
    };
    rows::weigh(config, ways as usize)
        + (formats_tables + paths_tables + machines_tables) * extra(Kind::Paired, frames)
        + transitions
        + config
            .view_counts
            .iter()
            .map(|&n| weight(Kind::Culling, n, frames.min(10)))
            .sum::<f64>()
        + drawn
}
