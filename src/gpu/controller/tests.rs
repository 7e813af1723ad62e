//! The controller without a device: pages, cross-fades and their one-frame hold, layers,
//! seeks and what a frame uploads.
use super::Controller;
use crate::gpu::{InstanceDesc, Layer, LayerMode, Transition};
use crate::layout::{GpuFrame, KEEP_POSE, source_kind};
use crate::library::ClipId;
use crate::mannequin;
use std::sync::Arc;

/// The built-in library in pages of `per_page` mannequins (53 joints each).
fn controller(max: u32, per_page: u32) -> (Controller, Vec<ClipId>) {
    let (lib, _, clips) = mannequin::library();
    let pages: Vec<(u32, u32)> = (0..max.div_ceil(per_page)).map(|_| (per_page, per_page * 53)).collect();
    (Controller::new(Arc::new(lib), max, &pages).unwrap(), clips)
}

#[test]
fn instances_fill_pages_in_order_with_page_relative_joint_offsets() {
    let (mut c, clips) = controller(5, 2);
    for _ in 0..5 {
        c.add_instance(&InstanceDesc::new(clips[1])).unwrap();
    }
    assert_eq!(c.page_of(3), Some((1, 1)));
    assert_eq!(c.instance(3).unwrap().joint_offset, 53);
    assert_eq!(c.page_range(2), 4..5);
    assert_eq!(c.pages_in_use(), 3);
    // Full: an error, nothing added.
    let e = c.add_instance(&InstanceDesc::new(clips[1])).unwrap_err();
    assert!(e.to_string().contains("at most 5"), "{e}");
    assert_eq!(c.instance_count(), 5);
    // The first frame uploads every page's frame, the five instances in three runs (one per
    // page) and their clocks.
    let up = c.begin_frame(0.0);
    assert_eq!(up.frames.len(), 3);
    let runs: Vec<(usize, usize, usize)> = up.instances.iter().map(|(p, f, v)| (*p, *f, v.len())).collect();
    assert_eq!(runs, [(0, 0, 2), (1, 0, 2), (2, 0, 1)]);
    assert_eq!(up.clocks.len(), 3);
    // An ordinary frame uploads only the frames.
    let up = c.begin_frame(0.016);
    assert!(up.instances.is_empty() && up.clocks.is_empty() && up.layer_defs.is_none());
    assert_eq!(up.bytes(), 3 * size_of::<GpuFrame>() as u64);
    // Truncating keeps pages consistent.
    c.truncate(3);
    assert_eq!((c.pages_in_use(), c.page_range(1)), (2, 2..3));
    assert_eq!(c.page_joint_count(1), 53);
}

/// A frame into last frame's upload reuses its room: an ordinary frame allocates nothing, and
/// an edit after it uploads what `begin_frame` would.
#[test]
fn a_frame_into_a_spare_upload_reuses_its_room() {
    let (mut c, clips) = controller(40, 5);
    for _ in 0..40 {
        c.add_instance(&InstanceDesc::new(clips[1])).unwrap();
    }
    let mut upload = c.begin_frame(0.0);
    assert_eq!(upload.frames.len(), 8);
    let (at, room) = (upload.frames.as_ptr(), upload.frames.capacity());
    c.begin_frame_into(0.016, &mut upload);
    assert_eq!((upload.frames.as_ptr(), upload.frames.capacity()), (at, room));
    assert!(upload.instances.is_empty() && upload.clocks.is_empty());
    let (mut twin, twin_clips) = controller(40, 5);
    for _ in 0..40 {
        twin.add_instance(&InstanceDesc::new(twin_clips[1])).unwrap();
    }
    let _ = twin.begin_frame(0.0);
    let _ = twin.begin_frame(0.016);
    for k in [c.instance_count() - 1, 3] {
        let world = glam::Mat4::from_translation(glam::Vec3::X);
        c.set_world(k, world).unwrap();
        twin.set_world(k, world).unwrap();
    }
    c.begin_frame_into(0.016, &mut upload);
    assert_eq!(upload, twin.begin_frame(0.016));
}

#[test]
fn edits_upload_in_runs_of_consecutive_instances() {
    let (mut c, clips) = controller(100, 100);
    for _ in 0..100 {
        c.add_instance(&InstanceDesc::new(clips[0])).unwrap();
    }
    c.begin_frame(0.0);
    for i in [3, 90, 91, 92, 40] {
        c.set_rate(i, 2.0).unwrap();
    }
    c.set_rate(91, 3.0).unwrap();
    let up = c.begin_frame(0.1);
    let runs: Vec<(usize, usize)> = up.instances.iter().map(|(_, f, v)| (*f, v.len())).collect();
    assert_eq!(runs, [(3, 1), (40, 1), (90, 3)]);
    assert_eq!(up.instances[2].2[1].rate, 3.0, "the last edit wins");
}

#[test]
fn a_cross_fade_that_interrupts_another_is_held_one_frame_keeping_the_pose() {
    let (mut c, clips) = controller(1, 1);
    c.add_instance(&InstanceDesc::new(clips[0])).unwrap();
    c.begin_frame(0.0);
    // A cross-fade starts at once: the source is the clip shown.
    c.play(0, &InstanceDesc::new(clips[1]), Some(Transition::linear(1.0)))
        .unwrap();
    let inst = c.instance(0).unwrap();
    assert_eq!((inst.clip, inst.source_clip), (clips[1].index(), clips[0].index()));
    assert_eq!(inst.flags & 15, source_kind::CLIP);
    c.begin_frame(0.1);
    // Another while it runs: held back; this frame keeps the pose it shows.
    c.play(0, &InstanceDesc::new(clips[2]), Some(Transition::linear(0.5)))
        .unwrap();
    let inst = *c.instance(0).unwrap();
    assert_eq!(inst.clip, clips[1].index(), "the running cross-fade still shows");
    let up = c.begin_frame(0.1);
    assert!(up.instances[0].2[0].flags & KEEP_POSE != 0, "the frame keeps its pose");
    // The next frame starts the new cross-fade from that snapshot.
    let up = c.begin_frame(0.1);
    let started = up.instances[0].2[0];
    assert_eq!(started.clip, clips[2].index());
    assert_eq!(started.flags & 15, source_kind::SNAPSHOT);
    assert_eq!(started.flags & KEEP_POSE, 0);
    assert!(started.seq != inst.seq);
}

#[test]
fn layers_share_definitions_and_bad_ones_change_nothing() {
    let (mut c, clips) = controller(4, 4);
    for _ in 0..4 {
        c.add_instance(&InstanceDesc::new(clips[0])).unwrap();
    }
    let layer = Layer {
        weight: 0.5,
        ..Layer::clip(LayerMode::AdditiveLocal, clips[1])
    };
    for i in 0..4 {
        c.set_layer(i, 1, Some(&layer), false).unwrap();
    }
    assert_eq!(c.layer_defs().len(), 1, "four uses of one layer share one definition");
    let before = *c.instance(2).unwrap();
    let bad = Layer {
        weight: f32::NAN,
        ..layer
    };
    assert!(c.set_layer(2, 1, Some(&bad), false).is_err());
    assert!(c.set_layer(2, 7, Some(&layer), false).is_err());
    assert_eq!(*c.instance(2).unwrap(), before);
    let up = c.begin_frame(0.0);
    assert_eq!(up.layer_defs.as_ref().map(|(first, d)| (*first, d.len())), Some((0, 1)));
    assert!(c.begin_frame(0.0).layer_defs.is_none(), "a definition uploads once");
}

#[test]
fn a_seek_writes_the_clock_and_ends_the_cross_fade() {
    let (mut c, clips) = controller(2, 2);
    c.add_instance(&InstanceDesc::new(clips[0])).unwrap();
    c.add_instance(&InstanceDesc::new(clips[0])).unwrap();
    c.begin_frame(0.0);
    c.play(1, &InstanceDesc::new(clips[1]), Some(Transition::linear(1.0)))
        .unwrap();
    c.set_time(1, 0.25).unwrap();
    assert_eq!(c.instance(1).unwrap().flags & 15, source_kind::NONE);
    let up = c.begin_frame(0.0);
    assert_eq!(up.clocks.len(), 1);
    let (page, first, clocks) = &up.clocks[0];
    assert_eq!((*page, *first), (0, 1));
    assert_eq!(clocks[0].time.to_f32(), 0.25);
    assert!(c.set_time(1, f32::INFINITY).is_err());
    assert!(c.set_time(5, 0.0).is_err());
}

/// The frame before an inertialized transition takes its velocity from the pose shown the frame
/// before only when that pose is in the buffer and continues the state shown: not on an
/// instance's first frame, nor after a cut or a seek, nor when the animator is told the poses
/// are not there, nor with culling.
#[test]
fn the_velocity_comes_from_the_pose_shown_only_where_it_continues() {
    use crate::layout::{KEEP_VELOCITY, VELOCITY_FROM_LAST_POSE};
    let (mut c, clips) = controller(4, 4);
    c.keep_velocities(true);
    for _ in 0..4 {
        c.add_instance(&InstanceDesc::new(clips[1])).unwrap();
    }
    let inertialize = Some(Transition::inertialize(0.2));
    // Whether instance i's frame (the next, `kept` telling whether the buffer holds the poses
    // of the frame before) keeps a velocity and takes it from the pose shown.
    let frame_after = |c: &mut Controller, kept: bool, i: usize| {
        c.set_last_poses_kept(kept);
        c.begin_frame(0.016);
        let flags = c.instance(i).unwrap().flags;
        (flags & KEEP_VELOCITY != 0, flags & VELOCITY_FROM_LAST_POSE != 0)
    };
    // The first frame shows nothing before it.
    c.play(0, &InstanceDesc::new(clips[2]), inertialize).unwrap();
    assert_eq!(frame_after(&mut c, true, 0), (true, false));
    // Then the transition starts: neither bit stays.
    assert_eq!(frame_after(&mut c, true, 0), (false, false));
    // A frame later the pose shown continues the state.
    c.play(0, &InstanceDesc::new(clips[3]), inertialize).unwrap();
    assert_eq!(frame_after(&mut c, true, 0), (true, true));
    // Not where the buffer does not hold the poses (a fused frame, or none recorded).
    c.begin_frame(0.016);
    c.play(1, &InstanceDesc::new(clips[2]), inertialize).unwrap();
    assert_eq!(frame_after(&mut c, false, 1), (true, false));
    // A cut, a seek, a new state: the frame after shows what the frame before did not.
    c.play(2, &InstanceDesc::new(clips[2]), None).unwrap();
    c.play(2, &InstanceDesc::new(clips[3]), inertialize).unwrap();
    assert_eq!(frame_after(&mut c, true, 2), (true, false));
    c.set_time(3, 0.5).unwrap();
    c.begin_frame(0.016);
    c.set_time(3, 0.25).unwrap();
    c.play(3, &InstanceDesc::new(clips[2]), inertialize).unwrap();
    assert_eq!(frame_after(&mut c, true, 3), (true, false));
    // The seek's frame over, the next takes the pose shown.
    c.begin_frame(0.016);
    c.begin_frame(0.016);
    c.play(3, &InstanceDesc::new(clips[3]), inertialize).unwrap();
    assert_eq!(frame_after(&mut c, true, 3), (true, true));
    c.set_instance(1, &InstanceDesc::new(clips[1])).unwrap();
    c.play(1, &InstanceDesc::new(clips[3]), inertialize).unwrap();
    assert_eq!(frame_after(&mut c, true, 1), (true, false));
    // With culling, a character may not have been evaluated the frame before.
    c.keep_culling(true, false);
    c.begin_frame(0.016);
    c.play(2, &InstanceDesc::new(clips[1]), inertialize).unwrap();
    assert_eq!(frame_after(&mut c, true, 2), (true, false));
}
