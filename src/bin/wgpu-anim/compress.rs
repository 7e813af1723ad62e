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
                    "raw_bytes": r.raw_bytes,
                    "compressed_bytes": r.compressed_bytes,
                    "ratio": r.ratio(),
                    "bytes_per_joint_sample": r.bytes_per_joint_sample(),
                    "max_error_cm": r.max_error_cm,
                    "p99_error_cm": r.p99_error_cm,
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
        return Ok(());
    }
    outln!(
        "{file}: threshold {} cm on a {} cm shell, {} cm per unit, rotation tolerance {}, skin tolerance {}, segments of {} frames",
        a.threshold,
        a.shell,
        a.unit_cm,
        a.rotation_tolerance,
        a.skin_tolerance,
        a.segment_frames
    );
    outln!();
    outln!(
        "| clip | joints | animated tracks | samples | raw bytes | compressed bytes | ratio | B/joint-sample | max error cm (joint, s) | p99 cm | time s |"
    );
    outln!("|---|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|");
    for r in &reports {
        outln!(
            "| {} | {} | {} | {} ({} Hz) | {} | {} | {:.1}:1 | {:.2} | {:.4} ({}, {:.3}) | {:.4} | {:.2} |",
            r.clip,
            r.joints,
            r.animated_tracks,
            r.samples,
            r.sample_rate.round(),
            r.raw_bytes,
            r.compressed_bytes,
            r.ratio(),
            r.bytes_per_joint_sample(),
            r.max_error_cm,
            r.max_error_joint,
            r.max_error_time,
            r.p99_error_cm,
            r.seconds
        );
    }
    for r in &reports {
        for t in &r.raw_tracks {
            outln!("{}: kept raw: {t}", r.clip);
        }
    }
    Ok(())
}
