//! Random authoring data through the library builder, the layer tools and the device-free
//! controller: skeletons (any parents, names and numbers, NaN included, sockets), clips (any keys, times,
//! interpolations, joint names), masks, blend trees of every node kind with any child indices,
//! difference clips, then instances, cross-fades, layers and frames on what was built. Each call
//! may refuse its input with an error; none may panic. Every pose the CPU mirror computes from
//! what was accepted (each instance after three clock steps, each clip at three times) must be
//! finite and within `reach::MAX_REACH`.
#![no_main]

use glam::{Mat4, Quat, Vec2, Vec3};
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;
use wgpu_anim::blend::{Blend2DKind, BlendNode, BlendTree, BlendTreeId};
use wgpu_anim::gpu::{Controller, Curve, Layer, LayerMode, Transition};
use wgpu_anim::offline::layers::{Reference, difference_clip, mask_from_joint, mask_from_joints};
use wgpu_anim::{
    Clip, InstanceDesc, Interpolation, JointDesc, JointTrack, LibraryBuilder, LoopMode, MaskId, Skeleton, Track,
    Transform,
};

const NAMES: [&str; 6] = ["root", "hips", "spine", "arm", "hand", ""];

/// Ids another library issued (a clip, a blend tree and a mask): what a caller mixing up its
/// libraries passes, which every call must refuse with `Error::ForeignId`.
struct Foreign {
    clip: wgpu_anim::ClipId,
    tree: BlendTreeId,
    mask: MaskId,
}

fn foreign() -> &'static Foreign {
    static FOREIGN: std::sync::OnceLock<Foreign> = std::sync::OnceLock::new();
    FOREIGN.get_or_init(|| {
        let mut b = LibraryBuilder::new();
        let joint = JointDesc {
            name: "root".into(),
            parent: None,
            rest: Transform::IDENTITY,
            inverse_bind: Mat4::IDENTITY,
        };
        let sk = b.add_skeleton(Skeleton::new("other", vec![joint]).expect("a one-joint skeleton"));
        let still = Clip {
            morph_weights: Vec::new(),
            name: "still".into(),
            duration: 1.0,
            looping: true,
            tracks: Vec::new(),
            events: Vec::new(),
            curves: Vec::new(),
        };
        let clip = b.add_clip(sk, &still).expect("a clip with no tracks");
        let tree = BlendTree {
            name: "other".into(),
            nodes: vec![BlendNode::Clip(clip)],
            root: 0,
        };
        Foreign {
            clip,
            tree: b.add_blend_tree(&tree).expect("a one-clip tree"),
            mask: b.add_mask(sk, "other", &[1.0]).expect("a one-joint mask"),
        }
    })
}

/// Mostly ordinary values, sometimes the extremes.
fn float(u: &mut Unstructured) -> Result<f32> {
    Ok(match u.int_in_range(0..=9)? {
        0 => f32::NAN,
        1 => f32::INFINITY,
        2 => -f32::MAX,
        3 => f32::from_bits(u.arbitrary()?),
        _ => f32::from(u.int_in_range(-40i16..=40)?) * 0.25,
    })
}

fn name(u: &mut Unstructured) -> Result<String> {
    Ok(if u.ratio(1, 8)? {
        u.arbitrary()?
    } else {
        format!("{}{}", u.choose(&NAMES)?, u.int_in_range(0..=3u8)?)
    })
}

fn vec3(u: &mut Unstructured) -> Result<Vec3> {
    Ok(Vec3::new(float(u)?, float(u)?, float(u)?))
}

fn quat(u: &mut Unstructured) -> Result<Quat> {
    Ok(Quat::from_xyzw(float(u)?, float(u)?, float(u)?, float(u)?))
}

fn transform(u: &mut Unstructured) -> Result<Transform> {
    Ok(Transform {
        translation: vec3(u)?,
        rotation: quat(u)?,
        scale: vec3(u)?,
    })
}

fn track<T>(u: &mut Unstructured, value: fn(&mut Unstructured) -> Result<T>) -> Result<Option<Track<T>>> {
    if u.ratio(1, 3)? {
        return Ok(None);
    }
    let interpolation = *u.choose(&[Interpolation::Step, Interpolation::Linear, Interpolation::CubicSpline])?;
    let keys = u.int_in_range(0..=6usize)?;
    let mut times = Vec::with_capacity(keys);
    let mut t = 0.0f32;
    for _ in 0..keys {
        t += if u.ratio(1, 10)? {
            float(u)?
        } else {
            f32::from(u.int_in_range(0..=8u8)?) * 0.125
        };
        times.push(t);
    }
    let per_key = if interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    let values_len = if u.ratio(1, 10)? {
        u.int_in_range(0..=20usize)?
    } else {
        keys * per_key
    };
    let values = (0..values_len).map(|_| value(u)).collect::<Result<Vec<T>>>()?;
    Ok(Some(Track {
        interpolation,
        times,
        values,
    }))
}

fn clip(u: &mut Unstructured, joints: &[String]) -> Result<Clip> {
    let tracks = (0..u.int_in_range(0..=6usize)?)
        .map(|_| {
            Ok(JointTrack {
                joint: if u.ratio(3, 4)? && !joints.is_empty() {
                    u.choose(joints)?.clone()
                } else {
                    name(u)?
                },
                translation: track(u, vec3)?,
                rotation: track(u, quat)?,
                scale: track(u, vec3)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let events = (0..u.int_in_range(0..=3usize)?)
        .map(|_| {
            Ok(wgpu_anim::ClipEvent {
                name: if u.arbitrary()? { "step".into() } else { name(u)? },
                time: float(u)?,
                threshold: float(u)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut curves = Vec::new();
    for _ in 0..u.int_in_range(0..=3usize)? {
        let curve_name = if u.arbitrary()? {
            u.choose(&["a", "b", "c"])?.to_string()
        } else {
            name(u)?
        };
        if let Some(track) = track(u, float)? {
            curves.push(wgpu_anim::FloatCurve { name: curve_name, track });
        }
    }
    Ok(Clip {
        morph_weights: Vec::new(),
        events,
        curves,
        name: name(u)?,
        duration: if u.ratio(1, 4)? {
            float(u)?
        } else {
            f32::from(u.int_in_range(1..=8u8)?) * 0.25
        },
        looping: u.arbitrary()?,
        tracks,
    })
}

fn node(u: &mut Unstructured, clips: &[wgpu_anim::ClipId], nodes: usize) -> Result<BlendNode> {
    let child = |u: &mut Unstructured| -> Result<usize> { u.int_in_range(0..=nodes) };
    let count = u.int_in_range(0..=18usize)?;
    Ok(match u.int_in_range(0..=3)? {
        0 => BlendNode::Clip(match clips {
            [] => foreign().clip,
            _ => *u.choose(clips)?,
        }),
        1 => BlendNode::Blend1D {
            parameter: u.int_in_range(0..=4)?,
            children: (0..count).map(|_| Ok((float(u)?, child(u)?))).collect::<Result<_>>()?,
        },
        2 => BlendNode::Blend2D {
            kind: *u.choose(&[
                Blend2DKind::Bilinear,
                Blend2DKind::Triangle,
                Blend2DKind::Delaunay,
                Blend2DKind::SimpleDirectional,
                Blend2DKind::FreeformCartesian,
                Blend2DKind::FreeformDirectional,
            ])?,
            parameters: [u.int_in_range(0..=4)?, u.int_in_range(0..=4)?],
            children: (0..count)
                .map(|_| Ok((Vec2::new(float(u)?, float(u)?), child(u)?)))
                .collect::<Result<_>>()?,
        },
        _ => BlendNode::Direct {
            children: (0..count)
                .map(|_| Ok((u.int_in_range(0..=4)?, child(u)?)))
                .collect::<Result<_>>()?,
        },
    })
}

/// Any id of `ids`, sometimes another library's (`other`), sometimes none.
fn pick<T: Copy>(u: &mut Unstructured, ids: &[T], other: T) -> Result<Option<T>> {
    Ok(match u.int_in_range(0..=5)? {
        0 | 1 => None,
        2 => Some(other),
        _ if ids.is_empty() => Some(other),
        _ => Some(*u.choose(ids)?),
    })
}

fn layer(u: &mut Unstructured, clips: &[wgpu_anim::ClipId], trees: &[BlendTreeId], masks: &[MaskId]) -> Result<Layer> {
    // The input is read in the order of the fields.
    let mode = *u.choose(&[LayerMode::Override, LayerMode::AdditiveLocal, LayerMode::AdditiveMesh])?;
    let weight = float(u)?;
    let clip = if clips.is_empty() || u.ratio(1, 8)? {
        foreign().clip
    } else {
        *u.choose(clips)?
    };
    Ok(Layer::clip(mode, clip)
        .with_weight(weight)
        .with_tree(if u.ratio(1, 3)? { pick(u, trees, foreign().tree)? } else { None })
        .with_mask(if u.ratio(1, 3)? { pick(u, masks, foreign().mask)? } else { None })
        .with_start(float(u)?)
        .with_rate(float(u)?)
        .with_once(u.arbitrary()?)
        .with_time_parameter(if u.ratio(1, 4)? {
            Some(u.int_in_range(0..=5)?)
        } else {
            None
        }))
}

fn run(u: &mut Unstructured) -> Result<()> {
    // A skeleton: any parents (cycles, forward references, out of range), names and rest poses.
    let joints = (0..u.int_in_range(0..=24usize)?)
        .map(|i| {
            Ok(JointDesc {
                name: name(u)?,
                parent: match u.int_in_range(0..=4)? {
                    0 => None,
                    1 => Some(u.arbitrary()?),
                    _ => Some(u.int_in_range(0..=i)?.saturating_sub(1)),
                },
                rest: transform(u)?,
                inverse_bind: if u.ratio(1, 4)? {
                    Mat4::from_cols_array(&[float(u)?; 16])
                } else {
                    Mat4::IDENTITY
                },
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let Ok(mut skeleton) = Skeleton::new(name(u)?, joints) else {
        return Ok(());
    };
    let joint_names = skeleton.joint_names().to_vec();
    // Sockets: any names, joints and offsets (NaN, non-unit rotations, too many).
    for _ in 0..u.int_in_range(0..=6)? {
        let joint = if u.ratio(3, 4)? && !joint_names.is_empty() {
            u.choose(&joint_names)?.clone()
        } else {
            name(u)?
        };
        let _ = skeleton.add_socket(&name(u)?, &joint, transform(u)?);
    }
    // Masks and difference clips from the layer tools.
    let refs: Vec<&str> = joint_names
        .iter()
        .map(String::as_str)
        .take(u.int_in_range(0..=4usize)?)
        .collect();
    let _ = mask_from_joints(&skeleton, &refs);
    let mask = mask_from_joint(&skeleton, &name(u)?, u.int_in_range(0..=40)?).ok();
    let authored = (0..u.int_in_range(0..=4usize)?)
        .map(|_| clip(u, &joint_names))
        .collect::<Result<Vec<_>>>()?;
    let mut extra = Vec::new();
    if let [a, b, ..] = authored.as_slice() {
        let reference = if u.arbitrary()? {
            Reference::Clip(b)
        } else {
            Reference::Pose {
                clip: b,
                time: float(u)?,
            }
        };
        if let Ok(d) = difference_clip(&skeleton, "difference", a, reference) {
            extra.push(d);
        }
    }
    let mut builder = LibraryBuilder::new();
    let sk = builder.add_skeleton(skeleton);
    let mut clips = Vec::new();
    for c in authored.iter().chain(&extra) {
        let added = if u.ratio(1, 3)? {
            // Root motion from a named joint or any, planar or full, at any rate.
            let motion = wgpu_anim::offline::root_motion::RootMotion {
                joint: if u.arbitrary()? { Some(name(u)?) } else { None },
                mode: if u.arbitrary()? {
                    wgpu_anim::offline::root_motion::RootMotionMode::Full
                } else {
                    wgpu_anim::offline::root_motion::RootMotionMode::Planar
                },
                rate: if u.arbitrary()? { float(u)? } else { 30.0 },
            };
            builder.add_clip_with_root_motion(sk, c, &motion)
        } else {
            builder.add_clip(sk, c)
        };
        if let Ok(id) = added {
            clips.push(id);
        }
    }
    let (mut masks, mut trees) = (Vec::new(), Vec::new());
    for m in 0..u.int_in_range(0..=2)? {
        let weights = match (&mask, u.arbitrary()?) {
            (Some(w), true) => w.clone(),
            _ => (0..u.int_in_range(0..=30usize)?)
                .map(|_| float(u))
                .collect::<Result<Vec<_>>>()?,
        };
        if let Ok(id) = builder.add_mask(sk, &format!("mask{m}"), &weights) {
            masks.push(id);
        }
    }
    for t in 0..u.int_in_range(0..=2)? {
        let count = u.int_in_range(0..=12usize)?;
        let nodes = (0..count).map(|_| node(u, &clips, count)).collect::<Result<Vec<_>>>()?;
        let tree = BlendTree {
            name: format!("tree{t}"),
            nodes,
            root: u.int_in_range(0..=count)?,
        };
        if let Ok(id) = builder.add_blend_tree(&tree) {
            trees.push(id);
        }
    }
    let library = Arc::new(builder.build());
    // Instances, cross-fades, layers and frames on the device-free controller.
    let Ok(mut controller) = Controller::new(library.clone(), 8, &[(4, 256), (4, 256)]) else {
        return Ok(());
    };
    for _ in 0..u.int_in_range(0..=24)? {
        let clip = match clips.as_slice() {
            [] => foreign().clip,
            _ => *u.choose(&clips)?,
        };
        let desc = InstanceDesc::new(clip)
            .with_tree(if u.ratio(1, 3)? { pick(u, &trees, foreign().tree)? } else { None })
            .with_params([float(u)?, float(u)?, float(u)?, float(u)?])
            .with_time(float(u)?)
            .with_rate(float(u)?)
            .with_loop_mode(match u.int_in_range(0..=2)? {
                0 => LoopMode::Once,
                1 => LoopMode::Repeat(u.arbitrary()?),
                _ => LoopMode::Forever,
            });
        let index = u.int_in_range(0..=9usize)?;
        let _ = match u.int_in_range(0..=6)? {
            0 => controller.add_instance(&desc).map(|_| ()),
            1 => controller.set_instance(index, &desc),
            2 => controller.play(
                index,
                &desc,
                Some(
                    Transition::linear(float(u)?)
                        .with_curve(if u.arbitrary()? { Curve::Smooth } else { Curve::Linear })
                        .with_frozen(u.arbitrary()?),
                ),
            ),
            3 => {
                let l = layer(u, &clips, &trees, &masks)?;
                let slot = u.int_in_range(0..=3usize)?;
                controller.set_layer(
                    index,
                    slot,
                    if u.ratio(1, 6)? { None } else { Some(&l) },
                    u.arbitrary()?,
                )
            }
            4 => controller.set_time(index, float(u)?),
            5 => controller.set_parameters(index, [float(u)?, float(u)?, float(u)?, float(u)?]),
            _ => {
                let _ = controller.begin_frame(float(u)?);
                Ok(())
            }
        };
    }
    let _ = controller.begin_frame(1.0 / 60.0);
    // The clock stage's CPU mirror on what the controller accepted: its checks pass (the
    // controller never makes what the mirror refuses), and its kernel does not panic.
    let n = controller.instance_count();
    let frame = wgpu_anim::layout::GpuFrame {
        dt: float(u)?,
        instance_count: n as u32,
        snapshot_offset: 0,
        ..Default::default()
    };
    let mut clocks = vec![wgpu_anim::layout::GpuClock::default(); n];
    let mut lists = vec![wgpu_anim::layout::BlendList::default(); n];
    let mut instances = controller.instances().to_vec();
    let mut page = wgpu_anim::cpu::PageBuffers::new(&frame, &mut instances)
        .layer_defs(controller.layer_defs())
        .clocks(&mut clocks)
        .blend_lists(&mut lists);
    for _ in 0..3 {
        wgpu_anim::cpu::clock(&library, &mut page).expect("the mirror accepts what the controller made");
    }
    // Accepted means within reach: each instance's pose through the mirror's sample, hierarchy
    // and palette stages is finite and within `reach::MAX_REACH` (instances blending from a
    // snapshot pose aside: this check runs no earlier frame to have made one).
    for (inst, list) in controller.instances().iter().zip(&lists) {
        let count = list.count.min(wgpu_anim::layout::MAX_BLEND_CLIPS) as usize;
        if list.samples[..count].iter().any(|s| s.clip == wgpu_anim::layout::SNAPSHOT_CLIP) {
            continue;
        }
        // Alone, at joint 0.
        let alone = wgpu_anim::layout::GpuInstance { joint_offset: 0, ..*inst };
        let pose = wgpu_anim::cpu::evaluate(&library, &[alone], &[*list]).expect("the mirror evaluates what the clock made");
        if let Some(what) = pose.beyond_reach() {
            panic!("an accepted input gave a pose beyond reach: {what}");
        }
    }
    // And each clip alone, at its start, middle and end.
    for &clip in &clips {
        let duration = library.clips()[clip.index() as usize].duration;
        for t in [0.0, 0.5 * duration, duration] {
            let pose = wgpu_anim::cpu::pose_at(&library, clip, t).expect("a clip of the library");
            if let Some(what) = pose.beyond_reach() {
                panic!("an accepted clip gave a pose beyond reach at {t} s: {what}");
            }
        }
    }
    Ok(())
}

fuzz_target!(|bytes: &[u8]| {
    let _ = run(&mut Unstructured::new(bytes));
});
