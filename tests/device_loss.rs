//! A lost device: an animator rebuilt on a new device from what it kept on the CPU (its newest
//! checkpoint and the frames since) continues from the same state — clocks and palettes equal,
//! bit for bit, to an animator that ran every frame on the new device — and refuses a rebuild
//! it cannot make.

mod common;

use rand::Rng;
use std::num::NonZeroU32;
use wgpu_anim::gpu::{Skinning, Transition};
use wgpu_anim::layout::{GpuClock, source_kind};
use wgpu_anim::{AnimationLibrary, Animator, AnimatorDesc, Error};

const CHARACTERS: usize = 240;
/// Morph targets the clips drive (up to) and the characters weigh.
const MORPH_TARGETS: usize = 6;
/// Skeletons of the crowd: all within the fused path's 128 joints, so both paths run.
const SKELETONS: [usize; 3] = [1, 37, 90];

fn crowd(device: &wgpu::Device, library: &AnimationLibrary) -> Animator {
    let desc = AnimatorDesc::default()
        .with_max_instances(CHARACTERS as u32)
        // Several pages: the checkpoint and the replay cover each.
        .with_page_instances(Some(64))
        // Dual quaternions kept: recomputed on the new device like the palettes.
        .with_dual_quaternion(true)
        // Morph weights: the clips drive some, each character holds its own; blended again on
        // the new device.
        .with_morph_weights(MORPH_TARGETS as u32)
        // Inertialized transitions: their kept velocities and decays are checkpointed too.
        .with_inertialization(true);
    Animator::new(device, library, &desc).unwrap()
}

/// The edits of frame `frame`, the same for every animator given them: the crowd at frame 0
/// (clips and blend trees, layers on a third); then each frame, for some characters, a
/// cross-fade (interrupting a running one takes a snapshot) or an inertialized transition (a
/// kept velocity, then a decay), a cut, a seek, a new rate or new
/// parameters; at frame 9 the last 20 characters leave, at frame 10 others take their place.
/// Frames 6 to 11 run on the fused path.
fn edit(animator: &mut Animator, frame: usize) {
    let mut r = common::rng(1000 + frame as u64);
    let lib = animator.controller().library_arc().clone();
    if frame == 0 {
        for i in 0..CHARACTERS {
            let skeleton = (i % SKELETONS.len()) as u32;
            let desc = {
                // The fields drawn before the state, as they were.
                let (time, rate) = (r.gen_range(0.0..1.0), r.gen_range(0.5..1.5));
                common::random_state(&mut r, &lib, skeleton)
                    .with_time(time)
                    .with_rate(rate)
            };
            animator.controller_mut().add_instance(&desc).unwrap();
        }
        common::random_layers(animator, &mut r);
        // A third skin with dual quaternions, a sixth with a blend.
        for i in (0..CHARACTERS).step_by(3) {
            let skinning = if i % 2 == 0 {
                Skinning::DualQuaternion
            } else {
                Skinning::Blend(0.5)
            };
            animator.controller_mut().set_skinning(i, skinning).unwrap();
        }
    }
    // Some characters' own morph weights change every frame.
    for i in (frame % 5..animator.controller().instance_count()).step_by(5) {
        let weights: Vec<f32> = (0..r.gen_range(0..=MORPH_TARGETS))
            .map(|_| r.gen_range(-1.0..1.0))
            .collect();
        animator.controller_mut().set_morph_weights(i, &weights).unwrap();
    }
    if frame == 9 {
        animator.controller_mut().truncate(CHARACTERS - 20);
    }
    if frame == 10 {
        for i in CHARACTERS - 20..CHARACTERS {
            let skeleton = (i % SKELETONS.len()) as u32;
            animator
                .controller_mut()
                .add_instance(&common::random_state(&mut r, &lib, skeleton))
                .unwrap();
        }
    }
    if animator.fused_available() {
        animator.set_fused((6..12).contains(&frame)).unwrap();
    }
    for i in 0..animator.controller().instance_count() {
        let skeleton = animator.controller().instance(i).unwrap().skeleton;
        match r.gen_range(0..24) {
            0..=2 => {
                let next = common::random_state(&mut r, &lib, skeleton);
                let duration = r.gen_range(0.5..2.0);
                let fade = match r.gen_range(0..3) {
                    0 => Transition::linear(duration),
                    1 => Transition::inertialize(duration),
                    _ => Transition::dead_blend(duration),
                };
                animator.controller_mut().play(i, &next, Some(fade)).unwrap();
            }
            3 => animator
                .controller_mut()
                .play(i, &common::random_state(&mut r, &lib, skeleton), None)
                .unwrap(),
            4 => animator.controller_mut().set_time(i, r.gen_range(0.0..1.0)).unwrap(),
            5 => animator.controller_mut().set_rate(i, r.gen_range(-1.0..2.0)).unwrap(),
            6 => animator
                .controller_mut()
                .set_parameters(i, [r.gen_range(-2.0..2.0), r.gen_range(-2.0..2.0), 0.5, 0.5])
                .unwrap(),
            _ => {}
        }
    }
}

fn dt(frame: usize) -> f32 {
    // Uneven frames, a pause among them.
    [1.0 / 60.0, 1.0 / 30.0, 0.0, 0.021][frame % 4]
}

fn run_frame(device: &wgpu::Device, queue: &wgpu::Queue, animator: &mut Animator, frame: usize) {
    animator.prepare(queue, dt(frame));
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder).unwrap();
    queue.submit([encoder.finish()]);
}

/// Every page's clocks and palettes, then the dual quaternions of its dual-quaternion
/// characters, as bits.
fn state(device: &wgpu::Device, queue: &wgpu::Queue, animator: &Animator) -> (Vec<GpuClock>, Vec<Vec<u32>>) {
    let mut clocks = Vec::new();
    let mut palettes = Vec::new();
    for page in 0..animator.controller().pages_in_use() {
        let (c, pose) = animator.read_back_page(device, queue, page).unwrap();
        clocks.extend(c);
        palettes.extend(
            pose.palette
                .iter()
                .map(|m| bytemuck::cast_slice::<_, u32>(std::slice::from_ref(m)).to_vec()),
        );
        // The morph weights drawn, of the characters' weights in use.
        let weights: Vec<f32> = animator
            .read_page_buffer(
                device,
                queue,
                page,
                wgpu_anim::shaders::Resource::MorphWeights,
                0,
                (64 * MORPH_TARGETS) as u64,
            )
            .unwrap();
        for (k, inst) in animator.controller().page_instances(page).iter().enumerate() {
            let used = &weights[k * MORPH_TARGETS..k * MORPH_TARGETS + inst.morph_count as usize];
            palettes.push(bytemuck::cast_slice::<_, u32>(used).to_vec());
        }
        // The dual quaternions of the characters that skin with them (the others' are not
        // written, and hold whatever their joints held before).
        for inst in animator
            .controller()
            .page_instances(page)
            .iter()
            .filter(|i| i.dual_quaternion > 0.0)
        {
            let joints = &pose.dual[inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize];
            palettes.extend(
                joints
                    .iter()
                    .map(|d| bytemuck::cast_slice::<_, u32>(std::slice::from_ref(d)).to_vec()),
            );
        }
    }
    (clocks, palettes)
}

/// Whether two states are the same bit for bit (NaN included); the first difference if not.
fn same(a: &(Vec<GpuClock>, Vec<Vec<u32>>), b: &(Vec<GpuClock>, Vec<Vec<u32>>)) -> Result<(), String> {
    if a.0.len() != b.0.len() || a.1.len() != b.1.len() {
        return Err(format!(
            "sizes {:?} and {:?}",
            (a.0.len(), a.1.len()),
            (b.0.len(), b.1.len())
        ));
    }
    if let Some(i) = (0..a.0.len()).find(|&i| a.0[i] != b.0[i]) {
        return Err(format!("clock of instance {i}: {:?} and {:?}", a.0[i], b.0[i]));
    }
    if let Some(j) = (0..a.1.len()).find(|&j| a.1[j] != b.1[j]) {
        let floats = |v: &[u32]| v.iter().map(|&b| f32::from_bits(b)).collect::<Vec<_>>();
        return Err(format!(
            "palette or dual quaternion entry {j}: {:?} and {:?}",
            floats(&a.1[j]),
            floats(&b.1[j])
        ));
    }
    Ok(())
}

/// Runs an animator with recovery every `interval` frames on a first device and a reference on
/// another, with the same edits, for `lost_after` frames; makes the next frame's edits on the
/// first (they are not uploaded yet), destroys its device and rebuilds it on the reference's.
/// With `lost_again_after`, rebuilds it on a third device instead, runs that many frames there
/// and loses that device too (before a checkpoint of its own when that is fewer than
/// `interval`), rebuilding on the reference's device. Checks
/// the rebuilt animator and the reference agree for 8 frames more. Returns the frames the first
/// rebuild replayed.
fn lose_and_rebuild(interval: u32, lost_after: usize, lost_again_after: Option<usize>) -> usize {
    let (library, _) = common::random_library_full(31, &SKELETONS, &[], false, MORPH_TARGETS);
    assert!(library.has_morph_weights());
    let (device_a, queue_a) = common::device();
    let (device_b, queue_b) = common::device();
    let (device_c, queue_c) = common::device();
    let mut lost = crowd(&device_a, &library);
    lost.set_recovery(&device_a, NonZeroU32::new(interval));
    let mut reference = crowd(&device_c, &library);
    for frame in 0..lost_after {
        for (a, device, queue) in [(&mut lost, &device_a, &queue_a), (&mut reference, &device_c, &queue_c)] {
            edit(a, frame);
            run_frame(device, queue, a, frame);
        }
    }
    edit(&mut lost, lost_after);
    edit(&mut reference, lost_after);
    let snapshots = lost
        .controller()
        .instances()
        .iter()
        .filter(|i| i.source_kind() == source_kind::SNAPSHOT)
        .count();
    assert!(
        snapshots > 0,
        "the crowd has cross-fades from snapshots when its device is lost"
    );
    let inertial = lost
        .controller()
        .instances()
        .iter()
        .filter(|i| i.source_kind() == source_kind::OFFSET)
        .count();
    assert!(
        inertial > 0,
        "the crowd has inertialized transitions when its device is lost"
    );
    let replayed = lost.recovery_frames().expect("recovery can rebuild");
    device_a.destroy();
    // Rebuilt on the reference's device, or on another one that is lost in turn.
    let (first_device, first_queue) = match lost_again_after {
        Some(_) => (&device_b, &queue_b),
        None => (&device_c, &queue_c),
    };
    let mut rebuilt = lost.rebuild(first_device, first_queue).unwrap();
    drop(lost);
    let mut frame = lost_after;
    if let Some(n) = lost_again_after {
        for _ in 0..n {
            run_frame(&device_b, &queue_b, &mut rebuilt, frame);
            run_frame(&device_c, &queue_c, &mut reference, frame);
            frame += 1;
            edit(&mut rebuilt, frame);
            edit(&mut reference, frame);
        }
        device_b.destroy();
        rebuilt = rebuilt.rebuild(&device_c, &queue_c).unwrap();
    }
    assert_eq!(rebuilt.controller().instances(), reference.controller().instances());
    let (device, queue) = (&device_c, &queue_c);
    for k in 0..8 {
        if k > 0 {
            edit(&mut rebuilt, frame);
            edit(&mut reference, frame);
        }
        run_frame(device, queue, &mut rebuilt, frame);
        run_frame(device, queue, &mut reference, frame);
        let (got, want) = (state(device, queue, &rebuilt), state(device, queue, &reference));
        same(&got, &want).unwrap_or_else(|e| panic!("frame {frame}, {replayed} frames replayed: {e}"));
        if k == 0 {
            // The comparison sees a state one frame off.
            run_frame(device, queue, &mut reference, frame + 1);
            let ahead = state(device, queue, &reference);
            assert!(same(&got, &ahead).is_err(), "one frame more differs");
            return replayed;
        }
        frame += 1;
    }
    replayed
}

/// Checkpoints every 4 frames, the device lost after 19 (frames 6 to 11 fused, cross-fades
/// interrupted on the way): the rebuild replays only the frames since the newest checkpoint back
/// from the GPU, and continues bit for bit.
#[test]
fn a_rebuilt_animator_continues_from_the_same_state() {
    let replayed = lose_and_rebuild(4, 19, None);
    assert!(
        (1..=4 + 2).contains(&replayed),
        "the newest checkpoint was at most two frames behind: {replayed} frames replayed"
    );
}

/// Lost before the first checkpoint: the rebuild replays every frame from the start.
#[test]
fn a_device_lost_before_the_first_checkpoint_replays_from_the_start() {
    assert_eq!(lose_and_rebuild(1000, 7, None), 7);
}

/// Lost again two frames after the rebuild, before the rebuilt animator's first checkpoint: the
/// second rebuild replays from the first one's checkpoint, the frames run on the second device
/// included.
#[test]
fn a_device_lost_again_before_a_new_checkpoint() {
    lose_and_rebuild(6, 15, Some(2));
}

/// A rebuild it cannot make is an error naming why: recovery off; recovery begun after the first
/// frame, before its first checkpoint is back; a library that is not the animator's.
#[test]
fn a_rebuild_it_cannot_make_is_an_error() {
    let (library, _) = common::random_library_of(31, &SKELETONS);
    let (device, queue) = common::device();
    let mut a = crowd(&device, &library);
    edit(&mut a, 0);
    run_frame(&device, &queue, &mut a, 0);
    let e = a.rebuild(&device, &queue).err().expect("recovery is off");
    assert!(
        matches!(e, Error::Recovery { .. }) && e.to_string().contains("recovery is off"),
        "{e}"
    );
    a.set_recovery(&device, NonZeroU32::new(8));
    assert_eq!(a.recovery_frames(), None);
    let e = a.rebuild(&device, &queue).err().expect("no checkpoint yet");
    assert!(e.to_string().contains("no checkpoint"), "{e}");
    // The first checkpoint is taken at the next frame and back a frame or two later.
    for frame in 1..4 {
        run_frame(&device, &queue, &mut a, frame);
    }
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    run_frame(&device, &queue, &mut a, 4);
    assert!(a.recovery_frames().is_some_and(|n| n <= 3), "{:?}", a.recovery_frames());
    let (other, _) = common::random_library_of(32, &SKELETONS);
    let foreign = wgpu_anim::gpu::GpuLibrary::new(&device, &other).unwrap();
    let e = a
        .rebuild_with_library(&device, &queue, foreign)
        .err()
        .expect("another library");
    assert!(e.to_string().contains("not this animator's"), "{e}");
    let shared = a.gpu_library().clone();
    assert!(a.rebuild_with_library(&device, &queue, shared).is_ok());
}

/// The crowd demo's scene (wandering mannequins with cross-fades and layers) loses its device
/// after 23 frames and is rebuilt on another ([`wgpu_anim::scene::Crowd::rebuild`]): 20 frames
/// later its picture is the picture of a crowd that never lost its device, byte for byte. (Without
/// footprints: the marks of the steps before the loss were on the lost device.)
#[cfg(feature = "scene")]
#[test]
fn a_rebuilt_crowd_draws_what_it_would_have_drawn() {
    use wgpu_anim::gpu::{GroundRenderer, OffscreenTarget};
    use wgpu_anim::scene::{Crowd, CrowdDesc};
    const W: u32 = 320;
    const H: u32 = 180;
    let make = |device: &wgpu::Device| {
        let mut c = Crowd::new(
            device,
            OffscreenTarget::COLOR_FORMAT,
            Some(OffscreenTarget::DEPTH_FORMAT),
            1,
            &CrowdDesc {
                count: 64,
                footprints: false,
                ..Default::default()
            },
        )
        .unwrap();
        c.animator.set_recovery(device, NonZeroU32::new(10));
        c
    };
    let step = |device: &wgpu::Device, queue: &wgpu::Queue, crowd: &mut Crowd| {
        crowd.update(queue, 1.0 / 30.0);
        let mut encoder = device.create_command_encoder(&Default::default());
        crowd.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
    };
    let picture = |device: &wgpu::Device, queue: &wgpu::Queue, crowd: &Crowd| {
        let target = OffscreenTarget::new(device, W, H).unwrap();
        crowd.set_camera(queue, &crowd.overview_camera(W as f32 / H as f32));
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let (mut pass, _views) = target.begin_pass(&mut encoder, GroundRenderer::SKY);
            crowd.draw(&mut pass).unwrap();
        }
        queue.submit([encoder.finish()]);
        target.read_rgba(device, queue).unwrap()
    };
    let (device_a, queue_a) = common::device();
    let (device_b, queue_b) = common::device();
    let (mut lost, mut reference) = (make(&device_a), make(&device_b));
    for _ in 0..23 {
        step(&device_a, &queue_a, &mut lost);
        step(&device_b, &queue_b, &mut reference);
    }
    device_a.destroy();
    let mut rebuilt = lost
        .rebuild(
            &device_b,
            &queue_b,
            OffscreenTarget::COLOR_FORMAT,
            Some(OffscreenTarget::DEPTH_FORMAT),
            1,
        )
        .unwrap();
    drop(lost);
    let first = picture(&device_b, &queue_b, &reference);
    for _ in 0..20 {
        step(&device_b, &queue_b, &mut rebuilt);
        step(&device_b, &queue_b, &mut reference);
    }
    let (got, want) = (
        picture(&device_b, &queue_b, &rebuilt),
        picture(&device_b, &queue_b, &reference),
    );
    assert!(got == want, "the rebuilt crowd's picture differs");
    assert!(got != first, "the crowd moved in those 20 frames");
}
