//! `wgpu-anim time-sampling`: the CPU's sampling of a file's clips timed, the mirror's `sample`
//! stage against `ClipSampler`, per joint-sample.

use crate::{TimeSamplingArgs, chosen_clips, clip_source, load};
use wgpu_anim::bench::{SamplingConfig, time_sampling};
use wgpu_anim::offline::gltf_import::ClipSource;
use wgpu_anim::offline::key_reduction::KeyReduction;

pub(crate) fn time(a: &TimeSamplingArgs) -> Result<(), String> {
    let imp = load(&a.file)?;
    let file = a.file.display().to_string();
    let (s, chosen) = chosen_clips(&imp, &file, a.clip.as_deref(), "sample")?;
    let sk = &imp.skeletons[s];
    let source = match a.reduce_keys {
        Some(tolerance) => ClipSource::Reduce(KeyReduction {
            tolerance: tolerance as f32,
            ..KeyReduction::default()
        }),
        None => clip_source(a.compressed.as_deref())?,
    };
    let lib = imp.build_library_with(&source).map_err(|e| format!("{file}: {e}"))?;
    let config = SamplingConfig {
        characters: a.characters,
        frames: a.frames as usize,
        rate: a.rate as f32,
    };
    outln!(
        "CPU sampling, one thread: {} characters, each at its own phase and at 0.8 to 1.2 times {} the clip's rate, 60 frames per second, medians of {} frames",
        config.characters,
        a.rate,
        config.frames
    );
    outln!();
    outln!(
        "| clip | joints | duration s | mirror `sample` ns/joint-sample | `ClipSampler` ns/joint-sample | mirror ÷ sampler | largest difference |"
    );
    outln!("|---|---:|---:|---:|---:|---:|---:|");
    for (n, &c) in chosen.iter().enumerate() {
        let clip = &sk.clips[c].clip;
        eprintln!("timing clip {}/{} '{}'", n + 1, chosen.len(), clip.name);
        let t = time_sampling(&lib.library, lib.clips[s][c], &config)
            .map_err(|e| format!("{file}: clip '{}': {e}", clip.name))?;
        outln!(
            "| {} | {} | {:.3} | {:.1} | {:.1} | {:.2} | {:.1e} |",
            clip.name,
            t.joints,
            clip.duration,
            t.mirror_ns,
            t.sampler_ns,
            t.mirror_ns / t.sampler_ns,
            t.max_difference
        );
    }
    Ok(())
}
