//! Watched sockets and events read back without the CPU waiting: every frame's matrices and
//! events arrive once, in frame order, tagged with their frame and equal to what a waiting read
//! of that frame gives; frames the ring has no room for are skipped, never waited for.

mod common;

use wgpu_anim::gpu::{FrameReadback, READBACK_SLOTS, Transition};
use wgpu_anim::layout::GpuEventRecord;
use wgpu_anim::{Affine, Animator, AnimatorDesc, InstanceDesc, mannequin};

const CHARACTERS: usize = 120;

/// The mannequin with its grip socket, 120 characters over three pages playing its clips at
/// different phases, cross-fading now and then.
fn crowd(device: &wgpu::Device) -> Animator {
    let (lib, _, clips) = mannequin::library_of(mannequin::skeleton_with_grip());
    let desc = AnimatorDesc::default()
        .with_max_instances(CHARACTERS as u32)
        .with_page_instances(Some(50));
    let mut a = Animator::new(device, &lib, &desc).unwrap();
    for i in 0..CHARACTERS {
        a.controller_mut()
            .add_instance(
                &InstanceDesc::new(clips[i % clips.len()])
                    .with_time(i as f32 * 0.037)
                    .with_world(glam::Mat4::from_translation(glam::Vec3::new(i as f32, 0.0, 0.0))),
            )
            .unwrap();
    }
    a
}

/// The characters watched: some in each page, not in order.
const WATCHED: [usize; 6] = [3, 4, 5, 117, 60, 0];

fn frame(device: &wgpu::Device, queue: &wgpu::Queue, a: &mut Animator, f: usize) {
    if f % 7 == 3 {
        let clip = a.controller().library().clips().len() as u32 - 1;
        let clip = a.controller().library().clip_at(clip % 6).unwrap();
        a.controller_mut()
            .play(f % CHARACTERS, &InstanceDesc::new(clip), Some(Transition::linear(0.3)))
            .unwrap();
    }
    a.prepare(queue, 1.0 / 30.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    a.encode(&mut encoder).unwrap();
    queue.submit([encoder.finish()]);
}

/// The watched sockets of the frame just run, read waiting for the GPU.
fn waiting_read(device: &wgpu::Device, queue: &wgpu::Queue, a: &Animator) -> Vec<Affine> {
    let pages: Vec<Vec<Affine>> = (0..a.controller().pages_in_use())
        .map(|p| a.read_sockets_page(device, queue, p).unwrap())
        .collect();
    WATCHED
        .iter()
        .map(|&i| {
            let (page, element) = a.socket_slot(i, 0).unwrap();
            pages[page][(element - u64::from(a.controller().page_max_joints(page))) as usize]
        })
        .collect()
}

/// A crowd whose frames a waiting read follows (so the GPU is never behind): every frame's
/// matrices arrive exactly once, in order, at the next prepare (one frame late), equal bit for
/// bit to the waiting read of that frame; nothing is skipped. A readback of the wrong frame
/// would differ (checked).
#[test]
fn every_frame_arrives_once_in_order_and_equal_to_a_waiting_read() {
    let (device, queue) = common::device();
    let mut a = crowd(&device);
    let pairs: Vec<(usize, usize)> = WATCHED.iter().map(|&i| (i, 0)).collect();
    a.watch_sockets(&device, &pairs).unwrap();
    a.watch_events(&device, 1024).unwrap();
    let mut truth: Vec<Vec<Affine>> = vec![Vec::new()];
    let mut truth_events = vec![Vec::new()];
    let mut arrived: Vec<(u64, FrameReadback)> = Vec::new();
    for f in 0..40 {
        frame(&device, &queue, &mut a, f);
        for r in a.take_readbacks() {
            arrived.push((a.frame(), r));
        }
        truth.push(waiting_read(&device, &queue, &a));
        let (events, overflow) = a.read_events(&device, &queue).unwrap();
        assert_eq!(overflow, 0);
        truth_events.push(sorted(events));
    }
    let fired: usize = truth_events.iter().map(Vec::len).sum();
    assert!(fired > 100, "the crowd's feet land: {fired} events");
    assert_eq!(a.readback_skipped(), 0);
    let frames: Vec<u64> = arrived.iter().map(|(_, r)| r.frame).collect();
    assert_eq!(
        frames,
        (1..40).collect::<Vec<u64>>(),
        "frames 1 to 39, once each, in order"
    );
    for (at, r) in &arrived {
        assert_eq!(at - r.frame, 1, "frame {} arrived at frame {at}", r.frame);
        let want = &truth[r.frame as usize];
        assert!(
            r.sockets == *want,
            "frame {}: the readback differs from the waiting read",
            r.frame
        );
        assert!(
            r.sockets != truth[r.frame as usize - 1],
            "frame {}: the previous frame's matrices differ",
            r.frame
        );
        assert_eq!(r.events_overflow, 0);
        assert_eq!(
            sorted(r.events.clone()),
            truth_events[r.frame as usize],
            "frame {}: its events, once each",
            r.frame
        );
        assert!(r.events.iter().all(|e| u64::from(e.frame) == r.frame));
    }
}

/// A frame's events in a canonical order (the GPU appends them in any order).
fn sorted(mut events: Vec<GpuEventRecord>) -> Vec<GpuEventRecord> {
    events.sort_by_key(|e| (e.character, e.state, e.clip, e.event));
    events
}

/// Frames run back to back with no waiting at all: each frame is either read back (once, in
/// order, at most `READBACK_SLOTS` + 1 frames late) or counted as skipped.
#[test]
fn back_to_back_frames_are_read_back_or_skipped_never_waited_for() {
    let (device, queue) = common::device();
    let mut a = crowd(&device);
    let pairs: Vec<(usize, usize)> = WATCHED.iter().map(|&i| (i, 0)).collect();
    a.watch_sockets(&device, &pairs).unwrap();
    a.watch_events(&device, 1024).unwrap();
    let mut frames = Vec::new();
    let n = 30;
    for f in 0..n {
        frame(&device, &queue, &mut a, f);
        for r in a.take_readbacks() {
            assert!(
                a.frame() - r.frame <= READBACK_SLOTS as u64 + 1,
                "frame {} at {}",
                r.frame,
                a.frame()
            );
            assert_eq!(r.sockets.len(), WATCHED.len());
            assert!(
                r.events.iter().all(|e| u64::from(e.frame) == r.frame),
                "events tagged with their frame"
            );
            frames.push(r.frame);
        }
    }
    // Drain: frames prepared with nothing submitted let the last ones arrive.
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    for _ in 0..2 {
        a.prepare(&queue, 0.0);
        frames.extend(a.take_readbacks().iter().map(|r| r.frame));
    }
    assert!(
        frames.windows(2).all(|w| w[0] < w[1]),
        "in order, once each: {frames:?}"
    );
    let read = frames.iter().filter(|&&f| f <= n as u64).count() as u64;
    assert_eq!(
        read + a.readback_skipped(),
        n as u64,
        "{frames:?}, {} skipped",
        a.readback_skipped()
    );
}

/// Events alone (no socket watched) come through the ring too; a capacity of 0 stops them.
#[test]
fn events_alone_are_read_back_and_stop_at_capacity_zero() {
    let (device, queue) = common::device();
    let mut a = crowd(&device);
    a.watch_events(&device, 4096).unwrap();
    let mut events = 0;
    for f in 0..20 {
        frame(&device, &queue, &mut a, f);
        for r in a.take_readbacks() {
            assert!(r.sockets.is_empty());
            events += r.events.len();
        }
    }
    assert!(events > 50, "{events}");
    a.watch_events(&device, 0).unwrap();
    assert_eq!(a.event_capacity(), 0);
    frame(&device, &queue, &mut a, 20);
    frame(&device, &queue, &mut a, 21);
    assert!(a.take_readbacks().is_empty(), "nothing watched, nothing read back");
    assert_eq!(a.read_events(&device, &queue).unwrap(), (Vec::new(), 0));
}

/// Watching what does not exist is refused by name; an empty list stops.
#[test]
fn watching_a_socket_that_does_not_exist_is_an_error() {
    let (device, queue) = common::device();
    let mut a = crowd(&device);
    let e = a.watch_sockets(&device, &[(3, 0), (CHARACTERS, 0)]).unwrap_err();
    assert!(e.to_string().contains(&format!("instance {CHARACTERS}")), "{e}");
    let e = a.watch_sockets(&device, &[(3, 1)]).unwrap_err();
    assert!(e.to_string().contains("socket 1"), "{e}");
    a.watch_sockets(&device, &[(3, 0)]).unwrap();
    a.watch_sockets(&device, &[]).unwrap();
    frame(&device, &queue, &mut a, 0);
    frame(&device, &queue, &mut a, 1);
    assert!(a.take_readbacks().is_empty());
}

/// The frames in which `prepare` waits for the GPU: none. Each frame is heavy for the adapter
/// (6,000 characters), and the next `prepare` comes as soon as it is submitted; a `prepare` that
/// waited for the frame before (to read its events and sockets back) would return with that
/// frame done — its `on_submitted_work_done` callback run by `prepare`'s own poll. None returns
/// so; the read-backs still arrive, later, in order. Frames made to wait (a waiting read-back
/// after `prepare`) are counted: the check sees a wait.
#[test]
fn prepare_never_waits_for_the_gpu() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let (device, queue) = common::device();
    let (lib, _, clips) = mannequin::library_of(mannequin::skeleton_with_grip());
    const N: usize = 6000;
    let mut a = Animator::new(&device, &lib, &AnimatorDesc::default().with_max_instances(N as u32)).unwrap();
    for i in 0..N {
        a.controller_mut()
            .add_instance(&InstanceDesc::new(clips[i % 6]).with_time(i as f32 * 0.013))
            .unwrap();
    }
    a.watch_events(&device, 8192).unwrap();
    a.watch_sockets(&device, &[(0, 0), (N - 1, 0)]).unwrap();
    let mut previous: Option<Arc<AtomicBool>> = None;
    let mut frames = Vec::new();
    // A frame: prepare (then, if `wait`, a waiting read-back); whether the frame before was done
    // by then; its passes submitted, with a flag its completion sets.
    let mut frame = |a: &mut Animator, wait: bool, frames: &mut Vec<u64>| -> bool {
        a.prepare(&queue, 1.0 / 60.0);
        if wait {
            a.wait_readbacks();
        }
        let was_done = previous.as_ref().is_some_and(|done| done.load(Ordering::Acquire));
        frames.extend(a.take_readbacks().iter().map(|r| r.frame));
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        queue.on_submitted_work_done(move || flag.store(true, Ordering::Release));
        previous = Some(done);
        was_done
    };
    let waited = (0..6).filter(|_| frame(&mut a, false, &mut frames)).count();
    assert_eq!(waited, 0, "frames in which prepare returned with the frame before done");
    // The check sees a wait: three frames whose prepare is followed by a waiting read-back.
    let waiting = (0..3).filter(|_| frame(&mut a, true, &mut frames)).count();
    assert_eq!(waiting, 3, "a waiting prepare is counted");
    assert!(frames.windows(2).all(|w| w[0] < w[1]), "in order: {frames:?}");
    assert!(!frames.is_empty(), "the read-backs arrive, later");
}

/// Every per-page buffer of the binding table is reachable and readable by its resource, and a
/// resource that is not per page, a page that does not exist or a range past the end is an error.
#[test]
fn page_buffers_are_read_back_by_their_resource() {
    use wgpu_anim::layout::{GpuClock, GpuInstance, outputs_offset};
    use wgpu_anim::shaders::{Resource, Scope};
    let (device, queue) = common::device();
    let mut a = crowd(&device);
    frame(&device, &queue, &mut a, 1);
    for resource in Resource::ALL {
        let per_page = resource.scope() == Scope::Page;
        assert_eq!(a.page_buffer(1, resource).is_some(), per_page, "{resource:?}");
    }
    let n = a.controller().page_range(1).len() as u64;
    let instances: Vec<GpuInstance> = a
        .read_page_buffer(&device, &queue, 1, Resource::Instances, 0, n)
        .unwrap();
    assert_eq!(instances, a.controller().page_instances(1), "the instances uploaded");
    let clocks: Vec<GpuClock> = a
        .read_page_buffer(&device, &queue, 1, Resource::CharacterState, 0, n)
        .unwrap();
    let (expected, _) = a.read_back_page(&device, &queue, 1).unwrap();
    assert_eq!(clocks, expected, "the clocks section starts the character state");
    let capacity = u64::from(a.controller().page_capacity(1));
    assert!(outputs_offset(a.controller().page_capacity(1)) >= capacity * size_of::<GpuClock>() as u64);
    let e = a
        .read_page_buffer::<GpuInstance>(&device, &queue, 1, Resource::Heap, 0, 1)
        .unwrap_err();
    assert!(e.to_string().contains("heap"), "{e}");
    assert!(
        a.read_page_buffer::<GpuInstance>(&device, &queue, 9, Resource::Instances, 0, 1)
            .is_err()
    );
    let e = a
        .read_page_buffer::<GpuInstance>(&device, &queue, 1, Resource::Instances, capacity, 1)
        .unwrap_err();
    assert!(e.to_string().contains("past the end"), "{e}");
    let e = a
        .read_page_buffer::<u16>(&device, &queue, 1, Resource::Instances, 1, 1)
        .unwrap_err();
    assert!(e.to_string().contains("multiple of 4"), "{e}");
    assert!(
        a.read_page_buffer::<GpuInstance>(&device, &queue, 1, Resource::Instances, u64::MAX, 2)
            .is_err()
    );
}
