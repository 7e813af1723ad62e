//! `cpu::ClipSampler`, the fast CPU playback path beside the mirror: bit for bit the mirror's
//! `sample_joint` at every time of a playback, a loop's wrap, seeks backward and forward, times
//! before the first key and past the last, on real takes, the mannequin, random clips of every
//! interpolation mode and compressed clips; and the errors of a foreign library or a short buffer.

mod common;

use glam::Vec4;
use wgpu_anim::cpu::{self, ClipSampler};
use wgpu_anim::layout::LocalPose;
use wgpu_anim::offline::gltf_import::{self, ClipSource};
use wgpu_anim::{AnimationLibrary, ClipId};

/// Poses equal bit for bit (so a NaN compares equal to the same NaN) where glam's `Vec4` is SSE2,
/// whose sums the sampler's lanes repeat; elsewhere within a rounding (1e-6 relative).
fn same_bits(a: &LocalPose, b: &LocalPose) -> bool {
    let bits = |p: &LocalPose| bytemuck::bytes_of(p).to_vec();
    if cfg!(target_arch = "x86_64") {
        return bits(a) == bits(b);
    }
    let near = |x: Vec4, y: Vec4| ((x - y).abs().cmple(y.abs() * 1e-6 + Vec4::splat(1e-6))).all();
    near(a.translation, b.translation) && near(a.rotation, b.rotation) && near(a.scale, b.scale)
}

/// Times a sampler meets in use: a playback at 60 Hz through two loops, every key time and the
/// midpoints around it, seeks back and forth, before the start and after the end.
fn times_for(lib: &AnimationLibrary, clip: ClipId) -> Vec<f32> {
    let info = lib.clip_header(clip).expect("the library's clip");
    let d = info.duration.max(1e-3);
    let mut times: Vec<f32> = (0..(2.0 * d * 60.0) as usize + 2)
        .map(|f| (f as f32 / 60.0) % d)
        .collect();
    let tracks = &lib.tracks()[info.track_offset as usize..][..3 * info.joint_count as usize];
    if let Some(t) = tracks
        .iter()
        .find(|t| t.key_count > 2 && t.interpolation != wgpu_anim::layout::INTERP_PACKED)
    {
        let keys = &lib.times()[t.time_offset as usize..][..t.key_count as usize];
        for w in keys.windows(2) {
            times.extend([w[0], 0.5 * (w[0] + w[1]), w[1]]);
        }
    }
    times.extend([
        d,
        0.0,
        -1.0,
        d + 1.0,
        0.25 * d,
        0.9 * d,
        0.1 * d,
        f32::INFINITY,
        0.5 * d,
    ]);
    times
}

/// Plays `clip` through [`times_for`] and checks every joint against the mirror's `sample_joint`.
fn check_clip(lib: &AnimationLibrary, clip: ClipId, what: &str) {
    let header = lib.clips()[clip.index() as usize];
    let mut sampler = ClipSampler::new(lib, clip).expect("a clip of the library");
    let mut pose = vec![LocalPose::default(); sampler.joint_count()];
    for t in times_for(lib, clip) {
        sampler
            .sample(lib, t, &mut pose)
            .expect("a buffer of the clip's joints");
        for (j, got) in pose.iter().enumerate() {
            let want = cpu::sample_joint(lib, &header, j as u32, t).expect("a joint of the clip");
            assert!(
                same_bits(got, &want),
                "{what}: joint {j} at t = {t}: sampler {got:?}, mirror {want:?}"
            );
        }
    }
}

fn library_of(file: &str, source: &ClipSource) -> (AnimationLibrary, Vec<ClipId>) {
    let imp = gltf_import::load(std::path::Path::new(file)).expect("the asset loads");
    let built = imp.build_library_with(source).expect("the asset's library builds");
    let s = imp.primary_skeleton().expect("a skeleton");
    let clips = built.clips[s].clone();
    (built.library, clips)
}

#[test]
fn real_takes_match_the_mirror_bit_for_bit() {
    for file in [
        "assets/cmu/cmu_01_03.glb",
        "assets/Fox/Fox.gltf",
        "assets/InterpolationTest/InterpolationTest.gltf",
    ] {
        let (lib, clips) = library_of(file, &ClipSource::Raw);
        for clip in clips {
            check_clip(&lib, clip, &format!("{file} clip {}", clip.index()));
        }
    }
}

#[test]
fn compressed_and_random_clips_match_the_mirror_bit_for_bit() {
    let (lib, clips) = library_of(
        "assets/Fox/Fox.gltf",
        &ClipSource::Compress(wgpu_anim::offline::compress::CompressionSettings::default()),
    );
    for clip in clips {
        check_clip(&lib, clip, &format!("compressed Fox clip {}", clip.index()));
    }
    for seed in 0..4 {
        let (lib, _) = common::random_library(seed);
        for k in 0..lib.clips().len() {
            let clip = lib.clip_at(k as u32).expect("a clip index");
            check_clip(&lib, clip, &format!("random library {seed} clip {k}"));
        }
    }
    let (lib, _, clips) = wgpu_anim::mannequin::library();
    for clip in clips {
        check_clip(&lib, clip, &format!("mannequin clip {}", clip.index()));
    }
}

#[test]
fn the_comparison_sees_a_wrong_pose() {
    let (lib, _, clips) = wgpu_anim::mannequin::library();
    let mut sampler = ClipSampler::new(&lib, clips[1]).expect("a clip of the library");
    let mut pose = vec![LocalPose::default(); sampler.joint_count()];
    sampler
        .sample(&lib, 0.3, &mut pose)
        .expect("a buffer of the clip's joints");
    let want = cpu::sample_joint(&lib, &lib.clips()[clips[1].index() as usize], 5, 0.3).expect("a joint");
    assert!(same_bits(&pose[5], &want));
    let mut wrong = pose[5];
    wrong.rotation += Vec4::new(0.0, 0.0, 0.0, 1e-7);
    assert!(!same_bits(&wrong, &want), "a rounding apart is a difference");
    // The sampler at another time is another pose.
    sampler
        .sample(&lib, 0.35, &mut pose)
        .expect("a buffer of the clip's joints");
    assert!(!same_bits(&pose[5], &want));
}

#[test]
fn bad_input_is_an_error_and_writes_nothing() {
    let (lib, _, clips) = wgpu_anim::mannequin::library();
    let (other, _, _) = wgpu_anim::mannequin::library();
    let mut sampler = ClipSampler::new(&lib, clips[0]).expect("a clip of the library");
    assert!(ClipSampler::new(&lib, other.clip_at(0).expect("a clip")).is_err());
    let mut short = vec![LocalPose::default(); sampler.joint_count() - 1];
    let e = sampler.sample(&lib, 0.5, &mut short).expect_err("a short buffer");
    assert!(e.to_string().contains("local poses given"), "{e}");
    assert!(short.iter().all(|p| *p == LocalPose::default()));
    let mut pose = vec![LocalPose::default(); sampler.joint_count()];
    assert!(sampler.sample(&other, 0.5, &mut pose).is_err(), "another library");
    assert!(sampler.sample(&lib, f32::NAN, &mut pose).is_err(), "a NaN time");
    assert!(pose.iter().all(|p| *p == LocalPose::default()));
    // The timing of a crowd too large to hold is refused before anything is allocated.
    let config = wgpu_anim::bench::SamplingConfig {
        characters: wgpu_anim::bench::sampling::MAX_SAMPLING_JOINTS,
        ..Default::default()
    };
    let e = wgpu_anim::bench::time_sampling(&lib, clips[0], &config).expect_err("too many joints");
    assert!(e.to_string().contains("joints"), "{e}");
}
