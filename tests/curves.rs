//! Float curves (meta channels): sampled and blended by the clock stage with the clips' weights
//! into each character's output, equal to the CPU mirror for random crowds (trees, cross-fades,
//! layers) on both paths, and to the blend written out by hand for a blend space, a cross-fade's
//! snapshot and override and additive layers.

mod common;

use rand::Rng;
use wgpu_anim::blend::{BlendNode, BlendTree};
use wgpu_anim::cpu::{EventLog, PageBuffers};
use wgpu_anim::gpu::{Layer, LayerMode, Transition};
use wgpu_anim::layout::{GpuFrame, GpuOutput, MAX_CURVES};
use wgpu_anim::{Animator, AnimatorDesc, FloatCurve, InstanceDesc, Interpolation, LibraryBuilder, Track};

/// A random curve over `[0, duration]`: step, linear or cubic, 1 to 6 keys.
fn random_curve(r: &mut rand::rngs::SmallRng, name: &str, duration: f32) -> FloatCurve {
    let n = r.gen_range(1..7);
    let mut times: Vec<f32> = (0..n).map(|_| r.gen_range(0.0..duration)).collect();
    times.sort_by(f32::total_cmp);
    times.dedup();
    let interpolation = [Interpolation::Step, Interpolation::Linear, Interpolation::CubicSpline][r.gen_range(0..3)];
    let per_key = if interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    let values = (0..times.len() * per_key).map(|_| r.gen_range(-2.0..2.0)).collect();
    FloatCurve {
        name: name.to_owned(),
        track: Track {
            interpolation,
            times,
            values,
        },
    }
}

/// A library laid out as `common::random_library`'s for one 37-joint skeleton, each clip with 0
/// to 3 random curves named `a` to `f`.
fn random_curve_library(seed: u64) -> wgpu_anim::AnimationLibrary {
    common::random_library_one_skeleton(seed, 37, |b, s, _, mut clip, _, r| {
        let mut names = vec!["a", "b", "c", "d", "e", "f"];
        for _ in 0..r.gen_range(0..4) {
            let name = names.remove(r.gen_range(0..names.len()));
            clip.curves.push(random_curve(r, name, clip.duration));
        }
        b.add_clip(s, &clip).unwrap()
    })
}

/// Random crowds on both paths, frame by frame from the GPU's own state: every character's
/// curves equal the mirror's (`cpu::clock` with the page's outputs) within 1e-5 of 1 + the value
/// (f32 sums of up to sixteen weighted samples); the previous frame's differ (the check sees a
/// frame's change).
#[test]
fn gpu_curves_equal_the_mirror_for_random_crowds() {
    let (device, queue) = common::device();
    let lib = random_curve_library(13);
    assert!(lib.curve_names().len() >= 4, "{:?}", lib.curve_names());
    let mut r = common::rng(17);
    let mut worst = 0.0f32;
    for fused in [false, true] {
        let mut a = Animator::new(&device, &lib, &AnimatorDesc::default().with_max_instances(200)).unwrap();
        a.set_fused(fused).unwrap();
        for _ in 0..200 {
            let mut desc = common::random_state(&mut r, &lib, 0);
            desc.rate = r.gen_range(-2.0..2.0);
            desc.time = r.gen_range(0.0..2.0);
            a.controller_mut().add_instance(&desc).unwrap();
        }
        common::random_layers(&mut a, &mut r);
        let mut previous: Vec<GpuOutput> = Vec::new();
        for f in 0..20 {
            for _ in 0..10 {
                let i = r.gen_range(0..a.controller().instance_count());
                let desc = common::random_state(&mut r, &lib, 0);
                a.controller_mut()
                    .play(i, &desc, Some(Transition::linear(0.3)))
                    .unwrap();
            }
            let dt = r.gen_range(0.005..0.05);
            a.prepare(&queue, dt);
            let mut outputs = a.read_outputs_page(&device, &queue, 0).unwrap();
            let (mut clocks, _) = a.read_back(&device, &queue).unwrap();
            let mut encoder = device.create_command_encoder(&Default::default());
            a.encode(&mut encoder).unwrap();
            queue.submit([encoder.finish()]);
            let gpu = a.read_outputs_page(&device, &queue, 0).unwrap();
            let frame = GpuFrame {
                dt,
                instance_count: a.controller().instance_count() as u32,
                snapshot_offset: a.max_joints(),
                flags: wgpu_anim::layout::FRAME_CURVES,
                ..Default::default()
            };
            let mut lists = vec![Default::default(); clocks.len()];
            let mut instances = a.controller().instances().to_vec();
            let mut log = EventLog::default();
            let mut page = PageBuffers::new(&frame, &mut instances)
                .layer_defs(a.controller().layer_defs())
                .clocks(&mut clocks)
                .blend_lists(&mut lists)
                .outputs(&mut outputs)
                .events(&mut log);
            wgpu_anim::cpu::clock(a.controller().library(), &mut page).unwrap();
            for (i, (g, w)) in gpu.iter().zip(&outputs).enumerate() {
                for c in 0..MAX_CURVES as usize {
                    let e = (g.curves[c] - w.curves[c]).abs() / (1.0 + w.curves[c].abs());
                    worst = worst.max(e);
                    assert!(
                        e < 1e-5,
                        "frame {f} (fused {fused}) character {i} curve {c}: {} vs {}",
                        g.curves[c],
                        w.curves[c]
                    );
                }
            }
            if f > 0 {
                let changed = gpu.iter().zip(&previous).filter(|(g, p)| g.curves != p.curves).count();
                assert!(
                    changed > gpu.len() / 2,
                    "frame {f}: only {changed} characters' curves changed"
                );
            }
            previous = gpu;
        }
    }
    println!("worst relative difference {worst:e}");
}

/// The blend written out by hand. Clip `on` holds curve `plant` at 1 and `ik` rising 0 → 1 over
/// its second; clip `off` has neither. A 1D blend space at 30 % `on` gives `plant` 0.3; a
/// cross-fade from `on` to `off` fades `plant` as the pose; an override layer playing `on` at
/// weight 0.25 over `off` gives 0.25, an additive one adds 0.25 · `ik`.
#[test]
fn curves_blend_as_the_pose() {
    let (device, queue) = common::device();
    let mut r = common::rng(2);
    let skeleton = common::random_skeleton(&mut r, "s", 4);
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(skeleton.clone());
    let mut on = common::random_clip(&mut r, &skeleton, "on");
    on.duration = 1.0;
    on.curves = vec![
        FloatCurve {
            name: "plant".into(),
            track: Track::constant(1.0),
        },
        FloatCurve {
            name: "ik".into(),
            track: Track::linear([(0.0, 0.0), (1.0, 1.0)]),
        },
    ];
    let mut off = common::random_clip(&mut r, &skeleton, "off");
    off.duration = 1.0;
    let on = b.add_clip(s, &on).unwrap();
    let off = b.add_clip(s, &off).unwrap();
    let tree = b
        .add_blend_tree(&BlendTree {
            name: "mix".into(),
            nodes: vec![
                BlendNode::Blend1D {
                    parameter: 0,
                    children: vec![(0.0, 1), (1.0, 2)],
                },
                BlendNode::Clip(off),
                BlendNode::Clip(on),
            ],
            root: 0,
        })
        .unwrap();
    let lib = b.build();
    let plant = lib.curve_id("plant").unwrap() as usize;
    let ik = lib.curve_id("ik").unwrap() as usize;
    let mut a = Animator::new(&device, &lib, &AnimatorDesc::default()).unwrap();
    let controller = a.controller_mut();
    controller
        .add_instance(&InstanceDesc::tree(tree, [0.3, 0.0, 0.0, 0.0]))
        .unwrap();
    controller.add_instance(&InstanceDesc::new(on)).unwrap();
    controller.add_instance(&InstanceDesc::new(off)).unwrap();
    controller.add_instance(&InstanceDesc::new(off)).unwrap();
    controller
        .set_layer(
            2,
            0,
            Some(&Layer::clip(LayerMode::Override, on).with_weight(0.25)),
            false,
        )
        .unwrap();
    controller
        .set_layer(
            3,
            0,
            Some(&Layer::clip(LayerMode::AdditiveLocal, on).with_weight(0.25)),
            false,
        )
        .unwrap();
    let frame = |a: &mut Animator| {
        a.prepare(&queue, 0.1);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        a.read_outputs_page(&device, &queue, 0).unwrap()
    };
    let o = frame(&mut a);
    assert!((o[0].curves[plant] - 0.3).abs() < 1e-6, "{}", o[0].curves[plant]);
    assert_eq!(o[1].curves[plant], 1.0);
    assert!((o[1].curves[ik] - 0.1).abs() < 1e-6, "{}", o[1].curves[ik]);
    assert_eq!(o[2].curves[plant], 0.25);
    assert!((o[3].curves[ik] - 0.025).abs() < 1e-6, "{}", o[3].curves[ik]);
    assert_eq!(o[3].curves[plant], 0.25);
    // Cross-fade character 1 to `off` over 0.4 s: `plant` follows the target's weight down.
    a.controller_mut()
        .play(1, &InstanceDesc::new(off), Some(Transition::linear(0.4)))
        .unwrap();
    let o = frame(&mut a);
    assert!((o[1].curves[plant] - 0.75).abs() < 1e-5, "{}", o[1].curves[plant]);
    for _ in 0..4 {
        frame(&mut a);
    }
    assert_eq!(frame(&mut a)[1].curves[plant], 0.0, "faded out");
}

/// A library of more than `MAX_CURVES` curve names is refused, naming the clip; so is a curve
/// with a bad key.
#[test]
fn too_many_curve_names_and_bad_keys_are_refused() {
    let mut r = common::rng(4);
    let skeleton = common::random_skeleton(&mut r, "s", 3);
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(skeleton.clone());
    let mut clip = common::random_clip(&mut r, &skeleton, "many");
    clip.curves = (0..=MAX_CURVES)
        .map(|k| FloatCurve {
            name: format!("c{k}"),
            track: Track::constant(0.0),
        })
        .collect();
    let e = b.add_clip(s, &clip).unwrap_err().to_string();
    assert!(e.contains("'many'") && e.contains("curve names"), "{e}");
    clip.curves = vec![FloatCurve {
        name: "nan".into(),
        track: Track::linear([(0.0, 0.0), (1.0, f32::NAN)]),
    }];
    let e = b.add_clip(s, &clip).unwrap_err().to_string();
    assert!(e.contains("'nan'") && e.contains("not finite"), "{e}");
    assert!(b.build().clips().is_empty(), "nothing added");
}
