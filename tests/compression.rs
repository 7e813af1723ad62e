//! Compressed clips: the GPU decoder against its CPU mirror and the f64 decoder, the error metric,
//! the compressor's reported error against an independent measurement, and the file format
//! against corruption.
//!
//! Tolerances: GPU against the CPU mirror 2e-5 per component relative to 1 + |value| (the same
//! f32 operations; FMA contraction, `sqrt` and `acos` may differ in the last bits);
//! the mirror against the f64 decoder 1e-5.

mod common;

use common::{device, pose_error, random_clip, random_skeleton, rng};
use glam::{DMat4, DVec3, Quat, Vec3};
use rand::Rng;
use wgpu_anim::codec;
use wgpu_anim::offline::compress::{self, CompressionSettings};
use wgpu_anim::offline::compressed_file as file;
use wgpu_anim::{
    Animator, AnimatorDesc, Clip, ClipId, InstanceDesc, JointTrack, LibraryBuilder, LoopMode, Skeleton, Track, cpu,
    reference,
};

/// A clip keyed on a grid of `rate` per second: random walks (linear), and on some joints a
/// step track (which stays raw) or a constant.
fn grid_clip(r: &mut rand::rngs::SmallRng, skeleton: &Skeleton, name: &str, rate: f32) -> Clip {
    let frames = r.gen_range(8..80);
    let times: Vec<f32> = (0..frames).map(|f| f as f32 / rate).collect();
    let tracks = skeleton
        .joint_names()
        .iter()
        .map(|joint| {
            let mut q = common::random_quat(r);
            let mut v = Vec3::new(r.gen_range(-0.5..0.5), r.gen_range(-0.5..0.5), r.gen_range(-0.5..0.5));
            let kind = r.gen_range(0..10);
            let mut rotations = Vec::new();
            let mut translations = Vec::new();
            for _ in 0..frames {
                let step = Vec3::new(r.gen_range(-1.0..1.0), r.gen_range(-1.0..1.0), r.gen_range(-1.0..1.0)) * 0.05;
                q = (Quat::from_scaled_axis(step) * q).normalize();
                v += step * 0.2;
                rotations.push(q);
                translations.push(v);
            }
            let rotation = match kind {
                0 => Track::constant(q),
                1 => Track {
                    interpolation: wgpu_anim::Interpolation::Step,
                    times: times.clone(),
                    values: rotations,
                },
                _ => Track::linear(times.iter().copied().zip(rotations)),
            };
            JointTrack {
                joint: joint.clone(),
                rotation: Some(rotation),
                translation: (kind % 3 == 0).then(|| Track::linear(times.iter().copied().zip(translations))),
                ..Default::default()
            }
        })
        .collect();
    Clip {
        morph_weights: Vec::new(),
        name: name.into(),
        duration: times[frames - 1].max(0.1),
        looping: false,
        tracks,
        events: Vec::new(),
        curves: Vec::new(),
    }
}

/// A library of random clips on a 37-joint skeleton, compressed at thresholds from very tight to
/// so loose that every width is 0, with a raw clip beside them. Random clips have step and cubic
/// tracks, which stay raw.
fn random_compressed_library() -> (
    wgpu_anim::AnimationLibrary,
    Skeleton,
    Vec<(ClipId, Clip, codec::CompressedClip)>,
) {
    let mut r = rng(13);
    let skeleton = random_skeleton(&mut r, "s", 37);
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(skeleton.clone());
    let mut out = Vec::new();
    for (k, threshold_cm) in [0.001, 0.01, 0.1, 1.0, 5.0, 30.0, 0.01].into_iter().enumerate() {
        let rate = r.gen_range(10.0..60.0f32).round();
        let clip = grid_clip(&mut r, &skeleton, &format!("c{k}"), rate);
        let settings = CompressionSettings {
            threshold_cm,
            rotation_tolerance: if threshold_cm >= 1.0 { 0.0 } else { 9e-5 },
            skin_tolerance: if threshold_cm >= 1.0 { 0.0 } else { 1e-4 },
            ..CompressionSettings::default()
        };
        let (c, _) = compress::compress(&skeleton, &clip, &settings).unwrap();
        out.push((b.add_compressed_clip(s, &c).unwrap(), clip, c));
    }
    let raw = random_clip(&mut r, &skeleton, "raw");
    b.add_clip(s, &raw).unwrap();
    (b.build(), skeleton, out)
}

/// Every width used by a blob.
fn widths(c: &codec::CompressedClip) -> Vec<u32> {
    if c.packed.is_empty() {
        return Vec::new();
    }
    let blob = codec::format::Blob::parse(&c.blob).unwrap();
    let h = blob.header();
    let mut w = Vec::new();
    for s in 0..h.segment_count {
        for k in 0..h.tracks {
            for comp in 0..3 {
                w.push(blob.component(s, k, comp).width);
            }
        }
    }
    w
}

/// The component each segment of each packed rotation drops (0 to 3: x, y, z, w).
fn dropped(c: &codec::CompressedClip) -> Vec<u32> {
    if c.packed.is_empty() {
        return Vec::new();
    }
    let blob = codec::format::Blob::parse(&c.blob).unwrap();
    let h = blob.header();
    let mut d = Vec::new();
    for s in 0..h.segment_count {
        for (k, p) in c.packed.iter().enumerate() {
            if p.channel == wgpu_anim::Channel::Rotation {
                d.push(blob.component(s, k as u32, 0).dropped);
            }
        }
    }
    d
}

#[test]
fn gpu_decode_matches_the_cpu_mirror_and_the_mirror_the_f64_decoder() {
    let (lib, skeleton, clips) = random_compressed_library();
    let all: Vec<u32> = clips.iter().flat_map(|(_, _, c)| widths(c)).collect();
    assert!(all.contains(&0), "some width 0");
    let drops: Vec<u32> = clips.iter().flat_map(|(_, _, c)| dropped(c)).collect();
    assert!(
        drops.contains(&3) && drops.iter().any(|&d| d < 3),
        "rotations that drop w and, where w comes near 0, another component"
    );
    assert!(all.iter().any(|&w| w >= 12), "some wide components");
    assert!(
        clips.iter().any(|(_, _, c)| !c.clip.tracks.is_empty())
            && clips.iter().filter(|(_, _, c)| !c.packed.is_empty()).count() >= 5,
        "raw tracks beside packed ones"
    );
    assert!(lib.has_compressed_clips());
    // Blobs whose lengths leave the next one off a 16-byte unit, each placed on one: the GPU
    // reads a track's clip range in two loads that assume it (library::PACKED_BLOB_ALIGN).
    assert!(
        clips.iter().any(|(_, _, c)| c.blob.len() % 4 != 0),
        "a blob of a length not a multiple of 4 words"
    );
    let packed = lib
        .tracks()
        .iter()
        .filter(|t| t.interpolation == wgpu_anim::layout::INTERP_PACKED);
    let starts: std::collections::BTreeSet<u32> = packed.map(|t| t.time_offset).collect();
    assert!(starts.len() >= 5);
    assert!(
        starts
            .iter()
            .all(|&b| (b as usize).is_multiple_of(wgpu_anim::library::PACKED_BLOB_ALIGN)),
        "{starts:?}"
    );

    // The CPU mirror against the f64 decoder.
    let mut r = rng(5);
    for (id, _, c) in &clips {
        let duration = c.clip.duration;
        for _ in 0..20 {
            let t = r.gen_range(0.0..duration);
            let pose = cpu::pose_at(&lib, *id, t).unwrap();
            let want = c.sample_f64(&skeleton, f64::from(t)).unwrap();
            for (j, (g, w)) in pose.local.iter().zip(&want).enumerate() {
                let wq = if w.rotation.dot(glam::DQuat::from_vec4(g.rotation.as_dvec4())) < 0.0 {
                    -w.rotation
                } else {
                    w.rotation
                };
                let e = (g.translation.truncate().as_dvec3() - w.translation)
                    .abs()
                    .max((g.scale.truncate().as_dvec3() - w.scale).abs())
                    .max_element();
                assert!(
                    e < 1e-5,
                    "clip {} joint {j} at {t}: mirror off the f64 decoder by {e:e}",
                    c.clip.name
                );
                // w = √(1 − x² − y² − z²) in f32 carries x, y, z's rounding divided by w.
                let e = (g.rotation.as_dvec4() - glam::DVec4::from(wq)).abs().max_element();
                let tolerance = 1e-6 / wq.w.abs().max(1e-2);
                assert!(
                    e < tolerance,
                    "clip {} joint {j} at {t}: mirror rotation off the f64 decoder by {e:e} (w {})",
                    c.clip.name,
                    wq.w
                );
            }
        }
    }

    // The GPU against the CPU mirror: 600 characters at random times of every clip.
    let requests: Vec<(ClipId, f32)> = (0..600)
        .map(|i| {
            let clip = lib.clip_at(i % lib.clips().len() as u32).unwrap();
            (clip, r.gen_range(0.0..lib.clip_duration(clip).unwrap()))
        })
        .collect();
    gpu_matches_the_mirror(&lib, &requests);
}

/// Plays `requests` (clip, time) on the GPU and compares every joint's local pose with the CPU
/// mirror's, within 2e-5; and proves the comparison fails on the mirror 50 ms later.
fn gpu_matches_the_mirror(lib: &wgpu_anim::AnimationLibrary, requests: &[(ClipId, f32)]) {
    let (device, queue) = device();
    let mut animator = Animator::new(
        &device,
        lib,
        &AnimatorDesc::default().with_max_instances(requests.len() as u32),
    )
    .unwrap();
    for &(clip, t) in requests {
        animator
            .controller_mut()
            .add_instance(
                &InstanceDesc::new(clip)
                    .with_time(t)
                    .with_rate(0.0)
                    .with_loop_mode(LoopMode::Once),
            )
            .unwrap();
    }
    animator.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder).unwrap();
    queue.submit([encoder.finish()]);
    let (_, gpu) = animator.read_back(&device, &queue).unwrap();
    let mut worst = 0.0f32;
    for (inst, &(clip, t)) in animator.controller().instances().iter().zip(requests) {
        let want = cpu::pose_at(lib, clip, t).unwrap();
        for (j, w) in want.local.iter().enumerate() {
            let g = &gpu.local[inst.joint_offset as usize + j];
            let e = pose_error(g, w);
            assert!(
                e <= 2e-5,
                "clip {} joint {j} at {t}: GPU off the mirror by {e:e}",
                clip.index()
            );
            worst = worst.max(e);
        }
    }
    eprintln!("GPU against the CPU mirror: worst {worst:e}");

    // The comparison fails on a wrong pose: the mirror one frame later.
    let (clip, t) = requests[0];
    let later = cpu::pose_at(lib, clip, t + 0.05).unwrap();
    let g = &gpu.local[animator.controller().instances()[0].joint_offset as usize..];
    assert!(
        later.local.iter().zip(g).any(|(w, g)| pose_error(g, w) > 2e-5),
        "a pose 50 ms off must not pass"
    );
}

#[test]
fn a_library_carries_cubic_spline_code_only_when_a_track_has_cubic_keys() {
    use wgpu_anim::shaders::{Stage, library_defs, stage_source_with};
    let has = |l: &wgpu_anim::AnimationLibrary| library_defs(l).iter().any(|d| d.0 == "CUBIC_KEYS");
    let cubic = wgpu_anim::clip::Interpolation::CubicSpline.gpu_code();
    // The mannequin's raw clips are linear: its stages carry no cubic-spline code.
    let (raw, _, _) = wgpu_anim::mannequin::library_in(wgpu_anim::offline::compress::ClipFormat::Raw);
    assert!(!raw.tracks().iter().any(|t| t.interpolation == cubic));
    assert!(!has(&raw));
    let sample = |l| stage_source_with(Stage::Sample, &library_defs(l)).unwrap();
    assert!(!sample(&raw).contains("cubic_segment"));
    // Random clips of every interpolation keep it.
    let (random, _) = common::random_library(3);
    assert!(random.tracks().iter().any(|t| t.interpolation == cubic));
    assert!(has(&random));
    assert!(sample(&random).contains("cubic_segment"));
}

#[test]
fn a_library_of_packed_clips_samples_without_the_raw_sampler_and_matches_the_mirror() {
    // The mannequin's clips: every animated track packed, so the stages carry no raw-key
    // sampler; a library with a raw clip beside compressed ones keeps it.
    let (lib, _, clips) = wgpu_anim::mannequin::library();
    let defs = |l: &wgpu_anim::AnimationLibrary| -> Vec<&str> {
        wgpu_anim::shaders::library_defs(l).into_iter().map(|d| d.0).collect()
    };
    assert!(lib.samples_packed_only() && defs(&lib).contains(&"PACKED_ONLY"));
    let (mixed, _, _) = random_compressed_library();
    assert!(mixed.has_compressed_clips() && !mixed.samples_packed_only());
    assert!(!defs(&mixed).contains(&"PACKED_ONLY"));

    // Random times, and the times of a segment's last frame and a little after, where a decode
    // reads two segments.
    let mut r = rng(21);
    let mut requests = Vec::new();
    for &clip in &clips {
        let duration = lib.clip_duration(clip).unwrap();
        for _ in 0..20 {
            requests.push((clip, r.gen_range(0.0..duration)));
        }
        let rate = wgpu_anim::mannequin::KEYS_PER_SECOND;
        for frame in [15.0, 15.5, 31.0, 31.9] {
            requests.push((clip, (frame / rate).min(duration)));
        }
    }
    gpu_matches_the_mirror(&lib, &requests);
}

/// A chain: root, a joint 1 unit out, and a tip 1 unit further.
fn chain() -> Skeleton {
    use wgpu_anim::Transform;
    Skeleton::from_rest_pose(
        "chain",
        vec![
            ("root".into(), None, Transform::IDENTITY),
            ("mid".into(), Some(0), Transform::from_translation(Vec3::X)),
            ("tip".into(), Some(1), Transform::from_translation(Vec3::X)),
        ],
    )
    .unwrap()
}

#[test]
fn a_parents_error_is_seen_in_its_children() {
    // Only the root rotates; its quantization error moves the tip twice as far as the middle
    // joint's shell, so the tip's error is the largest and sets the widths.
    let skeleton = chain();
    let keys: Vec<(f32, Quat)> = (0..=60)
        .map(|k| {
            let t = k as f32 / 30.0;
            (
                t,
                Quat::from_rotation_z((t * 3.0).sin() * 0.8) * Quat::from_rotation_y(t * 0.5),
            )
        })
        .collect();
    let clip = Clip {
        morph_weights: Vec::new(),
        name: "swing".into(),
        duration: 2.0,
        looping: false,
        tracks: vec![JointTrack {
            joint: "root".into(),
            rotation: Some(Track::linear(keys)),
            ..Default::default()
        }],
        events: Vec::new(),
        curves: Vec::new(),
    };
    let settings = CompressionSettings {
        threshold_cm: 0.5,
        rotation_tolerance: 0.0,
        skin_tolerance: 0.0,
        ..CompressionSettings::default()
    };
    let (c, report) = compress::compress(&skeleton, &clip, &settings).unwrap();
    assert_eq!(report.max_error_joint, "tip", "{report:?}");
    assert!(report.max_error_cm <= 0.5 && report.max_error_cm > 0.1, "{report:?}");
    // The root's own shell error alone is below the tip's.
    let (mut root, mut tip) = (0.0f64, 0.0f64);
    for f in 0..=60 {
        let t = f64::from(f) / 30.0;
        let got = reference::local_to_model(&skeleton, &c.sample_f64(&skeleton, t).unwrap());
        let want = reference::local_to_model(&skeleton, &reference::sample(&skeleton, &clip, t));
        root = root.max(shell_error(&got[0], &want[0], 0.03));
        tip = tip.max(shell_error(&got[2], &want[2], 0.03));
    }
    assert!(tip > 1.5 * root, "tip {tip:e}, root {root:e}");
}

/// The largest distance a point at `shell` along each axis of a joint moves between `a` and `b`.
fn shell_error(a: &DMat4, b: &DMat4, shell: f64) -> f64 {
    [DVec3::X, DVec3::Y, DVec3::Z]
        .iter()
        .map(|&axis| (a.transform_point3(axis * shell) - b.transform_point3(axis * shell)).length())
        .fold(0.0, f64::max)
}

#[test]
fn reported_max_error_matches_an_independent_f64_measurement() {
    let mut r = rng(21);
    let skeleton = random_skeleton(&mut r, "s", 20);
    let clip = grid_clip(&mut r, &skeleton, "c", 30.0);
    let settings = CompressionSettings {
        threshold_cm: 0.05,
        ..CompressionSettings::default()
    };
    let (c, report) = compress::compress(&skeleton, &clip, &settings).unwrap();
    assert!(!c.packed.is_empty());
    let shell = settings.shell_cm / settings.unit_cm;
    let rate = report.sample_rate;
    let mut worst = (0.0f64, 0usize, 0.0f64);
    let (mut sum, mut count) = (0.0f64, 0usize);
    // The rotation error: the longest row of the 3×3 difference, and the largest element of the
    // difference times any of a few rotations (such as inverse bind matrices), which it bounds.
    let mut worst_row: f64 = 0.0;
    // The skin error: how far each joint carries the model's origin from where the reference does
    // (the translation of model × inverse bind), over the largest side of the bind pose's box.
    let binds: Vec<DMat4> = skeleton.inverse_binds().iter().map(|b| b.as_dmat4()).collect();
    let (lo, hi) = binds.iter().map(|b| b.inverse().w_axis.truncate()).fold(
        (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
        |(lo, hi), p| (lo.min(p), hi.max(p)),
    );
    let size = (hi - lo).max_element();
    let mut worst_skin: f64 = 0.0;
    let mut worst_turned: f64 = 0.0;
    let turns: Vec<DMat4> = (0..16)
        .map(|_| {
            let axis = DVec3::new(r.gen_range(-1.0..1.0), r.gen_range(-1.0..1.0), r.gen_range(-1.0..1.0));
            DMat4::from_axis_angle(axis.try_normalize().unwrap_or(DVec3::X), r.gen_range(0.0..6.3))
        })
        .chain([DMat4::IDENTITY])
        .collect();
    for f in 0..report.samples {
        for u in [0.0, compress::BETWEEN] {
            let t = (f64::from(f) + u) / rate;
            if t > f64::from(clip.duration) {
                continue;
            }
            let got = reference::local_to_model(&skeleton, &c.sample_f64(&skeleton, t).unwrap());
            let want = reference::local_to_model(&skeleton, &reference::sample(&skeleton, &clip, t));
            for (j, (g, w)) in got.iter().zip(&want).enumerate() {
                let skin = ((*g * binds[j]).w_axis - (*w * binds[j]).w_axis).truncate().length();
                worst_skin = worst_skin.max(skin / size);
                let d = *g - *w;
                for row in 0..3 {
                    let len = (0..3).map(|col| d.col(col)[row].powi(2)).sum::<f64>().sqrt();
                    worst_row = worst_row.max(len);
                }
                for b in &turns {
                    let m = d * *b;
                    for col in 0..3 {
                        worst_turned = worst_turned.max(m.col(col).truncate().abs().max_element());
                    }
                }
                let e = shell_error(g, w, shell) * settings.unit_cm;
                sum += e;
                count += 1;
                if e > worst.0 {
                    worst = (e, j, t);
                }
            }
        }
    }
    let (e, j, t) = worst;
    // The compressor reads the reference at the keys' own f32 times, this at the f64 frame
    // times: up to 1e-7 s apart, in which this take's fastest points move up to about 1e-5 cm
    // and its fastest joints turn up to about 1e-6 rad.
    assert!(
        (e - report.max_error_cm).abs() <= 2e-5,
        "measured {e} cm at joint {j}, {t} s; reported {} cm at {}, {} s",
        report.max_error_cm,
        report.max_error_joint,
        report.max_error_time
    );
    assert_eq!(skeleton.joint_names()[j], report.max_error_joint);
    let mean = sum / count as f64;
    assert!(
        (mean - report.mean_error_cm).abs() <= 2e-6 && mean < report.p99_error_cm,
        "mean error measured {mean} cm, reported {} cm",
        report.mean_error_cm
    );
    // The blob's parts are its size.
    let b = report.blob_bytes;
    assert_eq!(b.clip + b.records + b.bitstream, 4 * c.blob.len());
    assert_eq!(b.tracks as usize, c.packed.len());
    assert!(
        (worst_row - report.max_rotation_error).abs() <= 2e-6,
        "rotation error measured {worst_row}, reported {}",
        report.max_rotation_error
    );
    assert!(
        worst_turned <= report.max_rotation_error + 1e-12
            && report.max_rotation_error <= settings.rotation_tolerance + 1e-12
            && worst_turned > 0.5 * report.max_rotation_error,
        "turned {worst_turned}, reported {}, bound {}",
        report.max_rotation_error,
        settings.rotation_tolerance
    );
    assert!(
        (worst_skin - report.max_skin_error).abs() <= 1e-7 && report.max_skin_error <= settings.skin_tolerance + 1e-12,
        "skin error measured {worst_skin}, reported {}, bound {}",
        report.max_skin_error,
        settings.skin_tolerance
    );
    assert!(report.max_error_cm <= 0.05 + 1e-9 && report.p99_error_cm <= report.max_error_cm);
    // Without the skin bound, the shell and rotation bounds alone let this clip's skin matrices
    // stray further: the bound is what holds them.
    let (_, unbound) = compress::compress(
        &skeleton,
        &clip,
        &CompressionSettings {
            skin_tolerance: 0.0,
            ..settings
        },
    )
    .unwrap();
    assert!(
        unbound.max_skin_error > settings.skin_tolerance && unbound.compressed_bytes < report.compressed_bytes,
        "without the skin bound: {} of the size in {} bytes; with it {} bytes",
        unbound.max_skin_error,
        unbound.compressed_bytes,
        report.compressed_bytes
    );
}

fn a_file() -> file::CompressedFile {
    let skeleton = wgpu_anim::mannequin::skeleton();
    let mut clips = wgpu_anim::mannequin::clips(&skeleton);
    // With a morph-weight track (the file keeps them) and one without keys after it.
    wgpu_anim::mannequin::add_breathing(&mut clips);
    clips[1].morph_weights.push(wgpu_anim::Track::default());
    let (c, _) = compress::compress(&skeleton, &clips[1], &CompressionSettings::default()).unwrap();
    assert_eq!(c.clip.morph_weights.len(), 2);
    file::CompressedFile {
        skeleton: skeleton.name().to_owned(),
        joints: skeleton.joint_names().to_vec(),
        clips: vec![c],
    }
}

#[test]
fn a_file_round_trips_and_a_corrupt_one_gets_an_error() {
    let f = a_file();
    let bytes = file::to_bytes(&f);
    assert_eq!(file::from_bytes(&bytes).unwrap(), f);

    // Every truncation, and flipped bits anywhere: an error, never a panic.
    for n in (0..bytes.len()).step_by(7) {
        assert!(file::from_bytes(&bytes[..n]).is_err(), "truncated to {n} bytes");
    }
    let mut r = rng(3);
    for _ in 0..300 {
        let mut b = bytes.clone();
        let i = r.gen_range(0..b.len());
        b[i] ^= 1 << r.gen_range(0..8);
        let e = file::from_bytes(&b).unwrap_err();
        assert!(
            e.contains("checksum") || e.contains("magic") || e.contains("version") || e.contains("bytes"),
            "{e}"
        );
    }
    let mut b = bytes.clone();
    b[0] = b'X';
    assert!(file::from_bytes(&b).unwrap_err().contains("magic"));
    let mut b = bytes.clone();
    b[4] = 9;
    assert!(file::from_bytes(&b).unwrap_err().contains("version"));

    // A well-formed file (its checksum right) with a bad blob: the blob's checks name it.
    let cases: Vec<(usize, u32, &str)> = vec![
        (0, 1, "frames"),             // one frame
        (3, 0, "frames per segment"), // no segment length
        (3, 12, "power of two"),      // a segment length the decoder cannot shift by
        (5, 3, "segment records"),    // wrong record size
        (7, 1, "words"),              // bitstream length
    ];
    for (word, value, expect) in cases {
        let mut bad = f.clone();
        bad.clips[0].blob[word] = value;
        let e = file::from_bytes(&file::to_bytes(&bad)).unwrap_err();
        assert!(e.contains(expect), "word {word} = {value}: {e}");
    }
    // The first segment's last track: a widths field past the largest, then the widest widths,
    // which end past the row.
    let k = f.clips[0].blob[2] as usize;
    let record = 8 + 6 * k;
    for (field, expect) in [(0x3fff, "widths field"), (24 + 25 * 24 + 625 * 24, "past the row")] {
        let mut bad = f.clone();
        let meta = &mut bad.clips[0].blob[record + 2 + k - 1];
        *meta = (*meta & 0xc000_ffff) | field << 16;
        let e = file::from_bytes(&file::to_bytes(&bad)).unwrap_err();
        assert!(e.contains(expect), "{e}");
    }
    // The f64 decoder refuses a bad blob rather than panicking.
    let mut bad = f.clips[0].clone();
    bad.blob[0] = 1;
    assert!(bad.sample_f64(&wgpu_anim::mannequin::skeleton(), 0.0).is_err());
    // A packed channel of a joint the skeleton lacks.
    let mut bad = f.clone();
    bad.clips[0].packed[0].joint = 999;
    assert!(
        file::from_bytes(&file::to_bytes(&bad))
            .unwrap_err()
            .contains("joint 999")
    );

    // Through a path: the error names the file.
    let dir = std::env::temp_dir().join(format!("wgpu-anim-compression-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("corrupt.wgac");
    let mut b = bytes.clone();
    let last = b.len() - 1;
    b[last] ^= 0xff;
    std::fs::write(&path, &b).unwrap();
    let e = file::read(&path).unwrap_err().to_string();
    assert!(e.contains("corrupt.wgac") && e.contains("checksum"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_adds_to_the_library_it_was_made_for_and_no_other() {
    let f = a_file();
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(wgpu_anim::mannequin::skeleton());
    let ids = f.add_to(&mut b, s).unwrap();
    assert_eq!(ids.len(), 1);
    let other = b.add_skeleton(chain());
    let e = f.add_to(&mut b, other).unwrap_err().to_string();
    assert!(e.contains("joints"), "{e}");
    let lib = b.build();
    assert!(lib.has_compressed_clips() && lib.clips().len() == 1);
}

#[test]
fn the_mannequin_library_is_compressed_and_smaller() {
    use wgpu_anim::offline::compress::ClipFormat;
    let (raw, _, _) = wgpu_anim::mannequin::library_in(ClipFormat::Raw);
    let (packed, _, clips) = wgpu_anim::mannequin::library();
    assert!(!raw.has_compressed_clips() && packed.has_compressed_clips());
    let reports = packed.compression_reports();
    assert!(
        clips.iter().all(|c| reports.iter().any(|(id, _)| id == c)),
        "every gait compressed"
    );
    for (id, r) in reports {
        eprintln!(
            "mannequin clip {}: {} → {} bytes ({:.1}:1), max error {:.4} cm",
            id.index(),
            r.raw_bytes,
            r.compressed_bytes,
            r.ratio(),
            r.max_error_cm
        );
        assert!(
            r.max_error_cm <= 0.01 + 1e-9,
            "clip {}: {} cm",
            id.index(),
            r.max_error_cm
        );
    }
    eprintln!(
        "mannequin library clip data on the GPU: raw {} bytes, compressed {} bytes",
        raw.clip_bytes(),
        packed.clip_bytes()
    );
    assert!(packed.clip_bytes() < raw.clip_bytes());
}
