//! `wgpu-anim bench`: one animation frame of crowds of mannequins timed, GPU and CPU.

use crate::BenchArgs;
use wgpu_anim::bench::{self, Config};

pub(crate) fn run_bench(a: &BenchArgs) -> Result<(), String> {
    let config = Config {
        counts: a.characters.clone(),
        frames: a.frames,
        workloads: a.workloads.clone(),
        clip_formats: a.clip_format.clone(),
        paths: a.paths.clone(),
        threads: a.threads,
        skinning: !a.no_skinning,
        morph: !a.no_morph,
        transitions: !a.no_transitions,
        view_counts: a.view_characters.iter().copied().filter(|&n| n > 0).collect(),
        ..Config::default()
    };
    let (device, queue) = wgpu_anim::gpu::headless_device().map_err(|e| e.to_string())?;
    let report = bench::run(&device, &queue, &config, &mut |line| eprintln!("{line}")).map_err(|e| e.to_string())?;
    outln!(
        "One animation frame, medians of {} frames; device: {}; {}",
        config.frames,
        report.device,
        report.date
    );
    outln!();
    out!("{}", bench::markdown_table(&report.rows));
    if !report.formats.is_empty() {
        outln!("\nThe sample pass, raw and compressed clips in alternate frames:\n");
        out!("{}", bench::formats_table(&report.formats));
    }
    if !report.paths.is_empty() {
        outln!("\nThe fused and the staged path on one crowd in alternate frames:\n");
        out!("{}", bench::paths_table(&report.paths));
    }
    if !report.skinning.is_empty() {
        outln!(
            "\nLinear (LBS) and dual-quaternion (DQS) skinning of one single-clip crowd, animated and drawn in alternate frames:\n"
        );
        out!("{}", bench::skinning_table(&report.skinning));
    }
    if !report.morph.is_empty() {
        outln!(
            "\nMorph targets (the morph workload): one single-clip crowd with and without, animated and drawn in alternate frames:\n"
        );
        out!("{}", bench::morph_table(&report.morph));
    }
    if !report.transitions.is_empty() {
        outln!(
            "\nThe sample pass with a quarter of a locomotion-2d crowd cross-fading, inertializing, or none transitioning, crowd after crowd frame by frame:\n"
        );
        out!("{}", bench::transitions_table(&report.transitions));
    }
    if !report.culling.is_empty() {
        outln!(
            "\nThe crowd-view workload: a camera framing a tenth of a field of walking mannequins; every pass of a frame, \
             all evaluated against culled (and a tenth as many characters, all evaluated), culled with update-rate LOD, \
             and with vertex animation textures below a projected size of {} (the draws not timed), in turn frame by frame:\n",
            bench::VAT_SIZE
        );
        out!("{}", bench::culling_table(&report.culling));
    }
    for note in &report.notes {
        outln!("note: {note}");
    }
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&report.rows).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n").map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &a.plot {
        let title = format!("One animation frame — {}", report.device);
        bench::plot::save(path, &report.rows, &title).map_err(|e| e.to_string())?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
