//! `wgpu-anim compress`: a file's clips compressed, with their size and accuracy per clip.

use crate::{CompressArgs, chosen_clips, load};
use serde_json::{Value, json};

pub(crate) fn compress(a: &CompressArgs) -> Result<(), String> {
    use wgpu_anim::offline::compress::{self, CompressionSettings};
    use wgpu_anim::offline::compressed_file::{self, CompressedFile};
    let imp = load(&a.file)?;
    let file = a.file.display().to_string();
    let (s, chosen) = chosen_clips(&imp, &file, a.clip.as_deref(), "compress")?;
    let sk = &imp.skeletons[s];
    let settings = CompressionSettings {
        threshold_cm: a.threshold,
        shell_cm: a.shell,
        unit_cm: a.unit_cm,
        rotation_tolerance: a.rotation_tolerance,
        skin_tolerance: a.skin_tolerance,
        segment_frames: a.segment_frames,
        ..CompressionSettings::default()
    };
    let mut reports = Vec::new();
    let mut clips = Vec::new();
    for (n, &c) in chosen.iter().enumerate() {
        let mut clip = sk.clips[c].clip.clone();
        if let Some(rate) = a.rate {
            clip = compress::resample(&sk.skeleton, &clip, rate).map_err(|e| format!("{file}: {e}"))?;
        }
        eprintln!(
            "compressing clip {}/{} '{}' ({:.2} s)",
            n + 1,
            chosen.len(),
            clip.name,
            clip.duration
        );
        let (compressed, report) =
            compress::compress(&sk.skeleton, &clip, &settings).map_err(|e| format!("{file}: {e}"))?;
        clips.push(compressed);
        reports.push(report);
    }
    if let Some(out) = &a.out {
        let contents = CompressedFile {
            skeleton: sk.skeleton.name().to_owned(),
            joints: sk.skeleton.joint_names().to_vec(),
            clips,
        };
        compressed_file::write(out, &contents).map_err(|e| e.to_string())?;
        eprintln!("wrote {}", out.display());
    }
    if a.json {
        return print_json(a, &file, &reports);
    }
    print_table(a, &file, &reports)
}

/// The reports as JSON.
fn print_json(a: &CompressArgs, file: &str, reports: &[wgpu_anim::codec::ClipReport]) -> Result<(), String> {
    let rows: Vec<Value> = reports
        .iter()
        .map(|r| {
            json!({
                "clip": r.clip,
                "joints": r.joints,
                "animated_tracks": r.animated_tracks,
                "packed_tracks": r.packed_tracks,
                "constant_tracks": r.constant_tracks,
                "raw_tracks": r.raw_tracks,
                "samples": r.samples,
                "sample_rate": r.sample_rate,
                "segment_frames": r.segment_frames,
                "raw_bytes": r.raw_bytes,
                "compressed_bytes": r.compressed_bytes,
                "ratio": r.ratio(),
                "bytes_per_joint_sample": r.bytes_per_joint_sample(),
                "max_error_cm": r.max_error_cm,
                "p99_error_cm": r.p99_error_cm,
                "mean_error_cm": r.mean_error_cm,
                "blob_bytes": {
                    "clip": r.blob_bytes.clip,
                    "records": r.blob_bytes.records,
                    "bitstream": r.blob_bytes.bitstream,
                    "segments": r.blob_bytes.segments,
                    "tracks": r.blob_bytes.tracks,
                },
                "acl": acl_figure(a, r).map(|f| json!({
                    "bytes": f.bytes,
                    "max_error_cm": f.max_error_cm,
                    "ratio_to_acl": r.compressed_bytes as f64 / f.bytes as f64,
                })),
                "max_error_joint": r.max_error_joint,
                "max_error_time": r.max_error_time,
                "max_rotation_error": r.max_rotation_error,
                "max_skin_error": r.max_skin_error,
                "seconds": r.seconds,
            })
        })
        .collect();
    let doc = json!({
        "file": file,
        "threshold_cm": a.threshold,
        "shell_cm": a.shell,
        "unit_cm": a.unit_cm,
        "rotation_tolerance": a.rotation_tolerance,
        "skin_tolerance": a.skin_tolerance,
        "segment_frames": a.segment_frames,
        "clips": rows,
    });
    outln!("{}", serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?);
    Ok(())
}

/// The reports as a table, the blob's bytes and the tracks kept raw.
fn print_table(a: &CompressArgs, file: &str, reports: &[wgpu_anim::codec::ClipReport]) -> Result<(), String> {
    use wgpu_anim::offline::compress;
    outln!(
        "{file}: threshold {} cm on a {} cm shell, {} cm per unit, rotation tolerance {}, skin tolerance {}, segments of {}",
        a.threshold,
        a.shell,
        a.unit_cm,
        a.rotation_tolerance,
        a.skin_tolerance,
        a.segment_frames.map_or_else(
            || format!("{:?} frames, the smaller kept", compress::AUTO_SEGMENT_FRAMES),
            |s| format!("{s} frames")
        )
    );
    outln!();
    outln!(
        "| clip | joints | animated tracks | samples | raw bytes | compressed bytes | ratio | B/joint-sample | max error cm (joint, s) | p99 cm | mean cm | time s | ACL 2.1 bytes | ÷ ACL | ACL max cm |"
    );
    outln!("|---|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|");
    for r in reports {
        let acl = acl_figure(a, r).map_or_else(
            || "– | – | –".to_owned(),
            |f| {
                format!(
                    "{} | {:.3} | {:.4}",
                    f.bytes,
                    r.compressed_bytes as f64 / f.bytes as f64,
                    f.max_error_cm
                )
            },
        );
        outln!(
            "| {} | {} | {} | {} ({} Hz, segments of {}) | {} | {} | {:.1}:1 | {:.2} | {:.4} ({}, {:.3}) | {:.4} | {:.4} | {:.2} | {acl} |",
            r.clip,
            r.joints,
            r.animated_tracks,
            r.samples,
            r.sample_rate.round(),
            r.segment_frames,
            r.raw_bytes,
            r.compressed_bytes,
            r.ratio(),
            r.bytes_per_joint_sample(),
            r.max_error_cm,
            r.max_error_joint,
            r.max_error_time,
            r.p99_error_cm,
            r.mean_error_cm,
            r.seconds
        );
    }
    outln!();
    for r in reports {
        let b = r.blob_bytes;
        if b.segments == 0 {
            continue;
        }
        let components = 3.0 * f64::from(b.tracks) * f64::from(r.samples);
        outln!(
            "{}: blob {} B: clip ranges {} B, segment records {} B ({} segments × {} tracks, {:.2} B per track per segment), bitstream {} B ({:.2} bits per component per frame); raw keys and track records {} B",
            r.clip,
            b.clip + b.records + b.bitstream,
            b.clip,
            b.records,
            b.segments,
            b.tracks,
            b.per_track_segment(),
            b.bitstream,
            8.0 * b.bitstream as f64 / components,
            r.compressed_bytes - (b.clip + b.records + b.bitstream)
        );
    }
    for r in reports {
        for t in &r.raw_tracks {
            outln!("{}: kept raw: {t}", r.clip);
        }
    }
    Ok(())
}

/// ACL 2.1's size and accuracy on a take, with its defaults (error threshold 0.01 cm on a 3 cm
/// shell, segments of about 16 frames), as published with the compressed-clips issue and recorded
/// in `benches/results/2026-11-25-2-compress-cmu-vs-acl.md`.
struct AclFigure {
    /// The file's name without its extension.
    take: &'static str,
    /// Frames sampled.
    samples: u32,
    bytes: usize,
    max_error_cm: f64,
}

const ACL_FIGURES: [AclFigure; 2] = [
    AclFigure {
        take: "cmu_01_03",
        samples: 4511,
        bytes: 447_545,
        max_error_cm: 0.0136,
    },
    AclFigure {
        take: "cmu_01_03",
        samples: 1128,
        bytes: 125_811,
        max_error_cm: 0.0145,
    },
];

/// ACL's figure for this run's take at this report's frame count, when one is on file and the
/// run measures as ACL's did: the same threshold and shell (ACL's defaults, which are ours).
fn acl_figure(a: &CompressArgs, r: &wgpu_anim::codec::ClipReport) -> Option<&'static AclFigure> {
    let as_acl = (a.threshold - 0.01).abs() < 1e-12 && (a.shell - 3.0).abs() < 1e-12;
    as_acl.then(|| acl_figure_of(&a.file, r.samples)).flatten()
}

/// ACL's figure for this file's take at this many frames, when one is on file.
fn acl_figure_of(file: &std::path::Path, samples: u32) -> Option<&'static AclFigure> {
    let stem = file.file_stem()?.to_str()?;
    ACL_FIGURES.iter().find(|f| f.take == stem && f.samples == samples)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn acl_figures_are_found_by_take_and_frame_count() {
        let at = |file: &str, samples| acl_figure_of(Path::new(file), samples).map(|f| f.bytes);
        assert_eq!(at("assets/cmu/cmu_01_03.glb", 4511), Some(447_545));
        assert_eq!(at("cmu_01_03.glb", 1128), Some(125_811));
        assert_eq!(at("assets/cmu/cmu_01_03.glb", 2256), None);
        assert_eq!(at("assets/cmu/cmu_02_01.glb", 4511), None);
    }
}
