//! Random and extreme values through the animator's public API, on the GPU.
//!
//! 4,096 characters over five pages get instance descriptions, cross-fades, layers, parameters,
//! rates and times drawn from a set of extremes (NaN, ±inf, ±f32::MAX, ±1e30, subnormals, -0,
//! 2^24 + 1, …), ids of another library and indices past the end; frames run with extreme `dt`s, on the staged and the fused
//! path. Every call either succeeds or returns an error; after every frame every palette entry of
//! every page is finite.

mod common;

use wgpu_anim::gpu::{Curve, Layer, LayerMode, Transition};
use wgpu_anim::{AnimationLibrary, Animator, AnimatorDesc, InstanceDesc, LoopMode, mannequin};

const EXTREMES: [f32; 18] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    1e-40,
    -1e-40,
    1e30,
    -1e30,
    f32::MAX,
    f32::MIN,
    f32::MIN_POSITIVE,
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    16_777_217.0,
    3.0,
    1e7,
];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn extreme(&mut self) -> f32 {
        EXTREMES[self.below(EXTREMES.len())]
    }
    /// Mostly ordinary values, sometimes an extreme one.
    fn value(&mut self, ordinary: f32) -> f32 {
        if self.below(3) == 0 { self.extreme() } else { ordinary }
    }
    /// An index, sometimes past the end.
    fn index(&mut self, count: usize) -> u32 {
        match self.below(4) {
            0 => u32::MAX,
            1 => (count + self.below(3)) as u32,
            _ => self.below(count) as u32,
        }
    }
    /// An id `at` makes of a library: of `libs.0`, or a quarter of the time of `libs.1` (another
    /// library of the same assets).
    fn id<T>(&mut self, libs: Libs<'_>, count: usize, at: impl Fn(&AnimationLibrary, u32) -> Option<T>) -> T {
        let lib = if self.below(4) == 0 { libs.1 } else { libs.0 };
        at(lib, self.below(count) as u32).expect("below the count")
    }
}

/// The animator's library and another one of the same assets.
type Libs<'a> = (&'a AnimationLibrary, &'a AnimationLibrary);

fn desc(r: &mut Rng, libs: Libs<'_>, clips: usize, trees: usize) -> InstanceDesc {
    let loop_mode = match r.below(5) {
        0 => LoopMode::Once,
        1 => LoopMode::Repeat(0),
        2 => LoopMode::Repeat(u32::MAX),
        3 => LoopMode::Repeat(1 + r.below(4) as u32),
        _ => LoopMode::Forever,
    };
    let world = match r.below(4) {
        0 => glam::Mat4::from_scale(glam::Vec3::splat(r.extreme())),
        1 => glam::Mat4::from_translation(glam::Vec3::new(r.extreme(), 0.0, r.extreme())),
        _ => glam::Mat4::IDENTITY,
    };
    let clip = r.id(libs, clips, AnimationLibrary::clip_at);
    let tree = (r.below(2) == 0).then(|| r.id(libs, trees, |l, k| l.blend().tree_at(k)));
    let params = [r.value(0.5), r.value(1.0), r.value(0.0), r.value(0.0)];
    let (time, rate) = (r.value(0.3), r.value(1.0));
    let skinning = match r.below(3) {
        0 => wgpu_anim::gpu::Skinning::Linear,
        1 => wgpu_anim::gpu::Skinning::DualQuaternion,
        _ => wgpu_anim::gpu::Skinning::Blend(r.value(0.5)),
    };
    InstanceDesc::new(clip)
        .with_tree(tree)
        .with_params(params)
        .with_time(time)
        .with_rate(rate)
        .with_loop_mode(loop_mode)
        .with_world(world)
        .with_tint([255; 4])
        .with_skinning(skinning)
}

fn layer(r: &mut Rng, libs: Libs<'_>, clips: usize, trees: usize, masks: usize) -> Layer {
    let modes = [LayerMode::Override, LayerMode::AdditiveLocal, LayerMode::AdditiveMesh];
    let mode = modes[r.below(3)];
    let base = if r.below(2) == 0 {
        Layer::clip(mode, r.id(libs, clips, AnimationLibrary::clip_at))
    } else {
        Layer::tree(mode, r.id(libs, trees, |l, k| l.blend().tree_at(k)))
    };
    base.with_weight(r.value(1.0))
        .with_mask((r.below(2) == 0).then(|| r.id(libs, masks, AnimationLibrary::mask_at)))
        .with_start(r.value(0.0))
        .with_rate(r.value(1.0))
        .with_once(r.below(2) == 0)
        .with_time_parameter((r.below(4) == 0).then(|| r.index(4)))
}

#[test]
fn extreme_values_through_the_api_leave_every_palette_finite() {
    let (device, queue) = common::device();
    let (library, _, _) = mannequin::library();
    let (other, _, _) = mannequin::library();
    let libs = (&library, &other);
    let (clips, trees, masks) = (
        library.clips().len(),
        library.blend().trees.len(),
        library.masks().len(),
    );
    let desc_ = AnimatorDesc::default()
        .with_max_instances(4096)
        .with_page_instances(Some(1000))
        .with_dual_quaternion(true);
    let mut a = Animator::new(&device, &library, &desc_).unwrap();
    assert!(a.controller().page_count() >= 5);
    let mut r = Rng(0x0dd_ba11);
    let (mut ok, mut refused) = (0u32, 0u32);
    let mut dual_skinned = 0usize;
    let mut count = |result: wgpu_anim::Result<()>| match result {
        Ok(()) => ok += 1,
        Err(_) => refused += 1,
    };
    while a.controller().instance_count() < 4096 {
        let d = desc(&mut r, libs, clips, trees);
        let added = a.controller_mut().add_instance(&d).map(|_| ());
        if added.is_err() {
            // Keep the crowd full: a plain instance instead.
            a.controller_mut()
                .add_instance(&InstanceDesc::new(library.clip_at(0).unwrap()))
                .unwrap();
        }
        count(added);
    }
    let frames = [
        1.0 / 60.0,
        0.0,
        1e-30,
        1e6,
        f32::MAX,
        f32::NAN,
        -1.0 / 60.0,
        1e30,
        f32::INFINITY,
        0.25,
    ];
    for (f, dt) in frames.into_iter().enumerate() {
        // Edits on a few hundred random characters (and ids past the end) before each frame.
        for _ in 0..400 {
            let i = if r.below(20) == 0 {
                4096 + r.below(3)
            } else {
                r.below(4096)
            };
            match r.below(8) {
                0 => {
                    let d = desc(&mut r, libs, clips, trees);
                    let t = Transition::linear(r.value(0.3))
                        .with_curve(if r.below(2) == 0 { Curve::Linear } else { Curve::Smooth })
                        .with_frozen(r.below(2) == 0);
                    count(a.controller_mut().play(i, &d, (r.below(3) > 0).then_some(t)));
                }
                1 => {
                    let slot = r.below(5);
                    let l = layer(&mut r, libs, clips, trees, masks);
                    count(
                        a.controller_mut()
                            .set_layer(i, slot, (r.below(4) > 0).then_some(&l), r.below(2) == 0),
                    );
                }
                2 => count(a.controller_mut().set_layer_weight(i, r.below(4), r.value(0.5))),
                3 => count(
                    a.controller_mut()
                        .set_parameters(i, [r.value(0.2), r.value(1.5), r.value(0.0), r.value(-0.3)]),
                ),
                4 => count(a.controller_mut().set_rate(i, r.value(1.5))),
                5 => count(a.controller_mut().set_time(i, r.value(2.0))),
                6 => count(a.controller_mut().set_instance(i, &desc(&mut r, libs, clips, trees))),
                _ => {
                    let world = glam::Mat4::from_translation(glam::Vec3::splat(r.value(1.0)));
                    count(a.controller_mut().set_world(i, world));
                }
            }
        }
        a.set_fused(f % 2 == 1 && a.fused_available()).unwrap();
        a.prepare(&queue, dt);
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        for page in 0..a.controller().pages_in_use() {
            let (_, pose) = a.read_back_page(&device, &queue, page).unwrap();
            let bad = pose
                .palette
                .iter()
                .position(|m| !(m.x.is_finite() && m.y.is_finite() && m.z.is_finite()));
            if let Some(j) = bad {
                let instance = a.controller().page_instances(page).iter().position(|inst| {
                    j as u32 >= inst.joint_offset && (j as u32) < inst.joint_offset + inst.joint_count
                });
                panic!(
                    "frame {f} (dt {dt}), page {page}: palette entry {j} is {:?}; instance {instance:?} of the page: {:?}",
                    pose.palette[j],
                    instance.map(|k| a.controller().page_instances(page)[k])
                );
            }
            // The dual quaternions of the instances that skin with them, finite too.
            for inst in a
                .controller()
                .page_instances(page)
                .iter()
                .filter(|i| i.dual_quaternion > 0.0)
            {
                dual_skinned += 1;
                let joints = inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize;
                let bad = pose.dual[joints].iter().position(|d| {
                    !(d.real.is_finite()
                        && d.dual.is_finite()
                        && d.stretch_diagonal.is_finite()
                        && d.stretch_off.is_finite())
                });
                assert!(
                    bad.is_none(),
                    "frame {f} (dt {dt}), page {page}: joint {bad:?} of {inst:?}"
                );
            }
        }
    }
    assert!(dual_skinned > 1000, "{dual_skinned} dual-quaternion instances checked");
    println!("{ok} calls accepted, {refused} refused");
    assert!(ok > 1000 && refused > 1000, "{ok} accepted, {refused} refused");
}
