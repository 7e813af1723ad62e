//! Bad input gets a clear error naming what and where, and leaves the target unchanged.

mod common;

use glam::Mat4;
use wgpu_anim::gpu::{CulledDraws, MeshBuffers, OffscreenTarget, SkinBinding};
use wgpu_anim::{
    Animator, AnimatorDesc, ClipId, Error, InstanceDesc, LoopMode, SkeletonId, SkinnedMesh, SkinnedRenderer, mannequin,
};

fn animator(max: u32) -> (wgpu::Device, wgpu::Queue, Animator) {
    let (device, queue) = common::device();
    let (lib, _, _) = mannequin::library();
    let a = Animator::new(&device, &lib, &AnimatorDesc::default().with_max_instances(max)).unwrap();
    (device, queue, a)
}

#[test]
fn bad_instances_are_rejected_with_their_index() {
    let (_d, _q, mut a) = animator(4);
    let clips: Vec<ClipId> = (0..2).map(|k| a.controller().library().clip_at(k).unwrap()).collect();
    a.controller_mut().add_instance(&InstanceDesc::new(clips[0])).unwrap();
    // A clip of another library: refused, naming it.
    let other = mannequin::library().2[1];
    let e = a.controller_mut().add_instance(&InstanceDesc::new(other)).unwrap_err();
    assert!(matches!(e, Error::ForeignId(_)), "{e:?}");
    assert!(e.to_string().starts_with("clip 1 belongs to another library"), "{e}");
    let cases: Vec<(InstanceDesc, &str)> = vec![
        (InstanceDesc::new(clips[1]).with_time(f32::NAN), "finite"),
        (InstanceDesc::new(clips[1]).with_rate(f32::INFINITY), "finite"),
        (
            InstanceDesc::new(clips[1]).with_loop_mode(LoopMode::Repeat(0)),
            "at least one loop",
        ),
        (
            InstanceDesc::new(clips[1]).with_world(Mat4::from_cols_array(&[0.0; 16])),
            "affine",
        ),
    ];
    let controller = a.controller_mut();
    for (desc, expect) in cases {
        let e = controller.add_instance(&desc).unwrap_err();
        assert!(matches!(e, Error::Instance { instance: 1, .. }), "{e:?}");
        assert!(e.to_string().contains(expect), "{e}");
    }
    assert_eq!(controller.instance_count(), 1, "nothing was added");
    assert!(
        controller
            .set_instance(7, &InstanceDesc::new(clips[0]))
            .unwrap_err()
            .to_string()
            .contains("instance 7")
    );
    assert!(controller.set_time(0, f32::NAN).is_err());
    assert!(controller.set_world(3, Mat4::IDENTITY).is_err());
}

#[test]
fn capacity_limits_are_errors_not_panics() {
    let (device, _q, mut a) = animator(2);
    let controller = a.controller_mut();
    let clip = controller.library().clip_at(0).unwrap();
    controller.add_instance(&InstanceDesc::new(clip)).unwrap();
    controller.add_instance(&InstanceDesc::new(clip)).unwrap();
    let e = controller.add_instance(&InstanceDesc::new(clip)).unwrap_err();
    assert!(
        matches!(e, Error::Limit { .. }) && e.to_string().contains("at most 2"),
        "{e}"
    );
    let (lib, _, _) = mannequin::library();
    // More joints than a u32 counts, and pages of no instance, are errors before any allocation.
    for (desc, says) in [
        (
            AnimatorDesc::default().with_max_instances(100_000_000),
            "overflow a u32",
        ),
        (
            AnimatorDesc::default().with_page_instances(Some(0)),
            "at least one instance",
        ),
    ] {
        let e = Animator::new(&device, &lib, &desc).err().expect("an error");
        assert!(matches!(e, Error::Limit { .. }) && e.to_string().contains(says), "{e}");
    }
}

#[test]
fn bad_meshes_name_the_vertex() {
    let good = mannequin::mannequin().mesh;
    let mut m: SkinnedMesh = good.clone();
    m.weights[10] = [0.0; 4];
    assert!(m.validate(53).unwrap_err().to_string().contains("vertex 10"));
    let mut m = good.clone();
    m.joints[5] = [60, 0, 0, 0];
    m.weights[5] = [1.0, 0.0, 0.0, 0.0];
    let e = m.validate(53).unwrap_err().to_string();
    assert!(e.contains("vertex 5") && e.contains("joint index 60"), "{e}");
    let mut m = good.clone();
    m.indices.extend([0, 1, 1_000_000]);
    assert!(m.validate(53).unwrap_err().to_string().contains("out of range"));
    let mut m = good;
    m.weights[3] = [f32::NAN, 1.0, 0.0, 0.0];
    assert!(m.validate(53).unwrap_err().to_string().contains("vertex 3"));
}

#[test]
fn pipelines_the_device_refuses_are_errors_not_panics() {
    // A device with fewer storage buffers per stage than `clock` (the first stage made) binds
    // (4): the animator is an error naming the stage, not a panic in wgpu's uncaptured-error
    // handler.
    let limits = wgpu::Limits {
        max_storage_buffers_per_shader_stage: 3,
        ..wgpu::Limits::default()
    };
    let (device, _queue) = wgpu_anim::gpu::headless_device_with_limits(limits).unwrap();
    let (lib, skeleton, _) = mannequin::library();
    let e = Animator::new(&device, &lib, &AnimatorDesc::default())
        .err()
        .expect("the clock stage binds 4 storage buffers");
    assert!(matches!(e, Error::Refused { .. }), "{e}");
    assert!(e.to_string().contains("the clock pipeline"), "{e}");

    // A device that reads fewer vertex attributes than a skinned vertex has (5): the renderer is
    // an error; the animator, which has no vertex stage, is not.
    let limits = wgpu::Limits {
        max_vertex_attributes: 4,
        ..wgpu::Limits::default()
    };
    let (device, _queue) = wgpu_anim::gpu::headless_device_with_limits(limits).unwrap();
    let a = Animator::new(&device, &lib, &AnimatorDesc::default()).unwrap();
    let mesh = mannequin::mesh(&mannequin::skeleton());
    let e = wgpu_anim::SkinnedRenderer::new(&device, &a, skeleton, &mesh, wgpu::TextureFormat::Rgba8Unorm, None, 1)
        .err()
        .expect("5 vertex attributes on a device that reads 4");
    assert!(e.to_string().contains("the renderer of mesh"), "{e}");

    // A skinning binding past the device's maximum (and past u32::MAX for its last entry).
    let binding = wgpu_anim::gpu::SkinBinding::new(0, u32::MAX - 1)
        .with_previous(true)
        .with_dual_quaternion(true);
    let e = binding.bind_group_layout(&device).expect_err("binding 4294967294");
    assert!(e.to_string().contains("skinning bind group layout"), "{e}");
}

/// A compute pipeline of `wgsl`'s entry point `main` with the layout `layout` (`None`: derived
/// from the shader), as a user makes one of their own.
fn user_pipeline(device: &wgpu::Device, wgsl: &str, layout: Option<&wgpu::PipelineLayout>) -> wgpu::ComputePipeline {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("user shader"),
        source: wgpu::ShaderSource::Wgsl(wgsl.into()),
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("user pipeline"),
        layout,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    })
}

/// Writes 42 into the first word of the buffer at group 0, binding 0.
const USER_SHADER: &str = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1) fn main() { out[0] = 42u; }";

#[test]
fn a_users_broken_shader_or_pipeline_in_scoped_is_an_error_and_the_device_still_works() {
    use wgpu_anim::gpu::scoped;
    let (device, queue) = common::device();
    // Nothing may reach the uncaptured-error handler: the scopes catch it all.
    let uncaptured = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = uncaptured.clone();
    device.on_uncaptured_error(std::sync::Arc::new(move |_| {
        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }));

    // Invalid WGSL: refused, with naga's message naming what is wrong.
    let broken = "@compute @workgroup_size(1) fn main() { let x = not_declared + 1u; }";
    let e = pollster::block_on(scoped(&device, "my shader", || {
        device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("user shader"),
            source: wgpu::ShaderSource::Wgsl(broken.into()),
        })
    }))
    .expect_err("invalid WGSL is refused");
    let Error::Refused { what, reason } = &e else {
        panic!("not Error::Refused: {e:?}")
    };
    assert_eq!(what, "my shader");
    assert!(
        reason.contains("no definition in scope for identifier") && reason.contains("not_declared"),
        "naga's message: {reason}"
    );
    assert!(e.to_string().contains("my shader"), "{e}");

    // A pipeline whose layout does not match its shader: the shader binds a storage buffer at
    // group 0, binding 0; the layout has a uniform buffer there.
    let group = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("user layout"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    });
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("user layout"),
        bind_group_layouts: &[Some(&group)],
        immediate_size: 0,
    });
    let e = pollster::block_on(scoped(&device, "my pipeline", || {
        user_pipeline(&device, USER_SHADER, Some(&layout))
    }))
    .expect_err("a layout that does not match the shader is refused");
    let Error::Refused { what, reason } = &e else {
        panic!("not Error::Refused: {e:?}")
    };
    assert_eq!(what, "my pipeline");
    assert!(
        reason.contains("user pipeline") && reason.contains("not available in the pipeline layout"),
        "wgpu names the pipeline and the binding that does not match: {reason}"
    );

    // The device still works: the same pipeline with a layout derived from the shader is made
    // inside `scoped`, runs and writes its value.
    let pipeline = pollster::block_on(scoped(&device, "my pipeline", || {
        user_pipeline(&device, USER_SHADER, None)
    }))
    .expect("a valid pipeline");
    let buffer = pollster::block_on(scoped(&device, "my buffer", || {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("user output"),
            size: 16,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    }))
    .expect("a valid buffer");
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("user output"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: buffer.as_entire_binding(),
        }],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
    queue.submit([encoder.finish()]);
    let out: Vec<u32> = wgpu_anim::gpu::read_buffer(&device, &queue, &buffer, 0, 1).unwrap();
    assert_eq!(out, [42]);
    assert_eq!(
        uncaptured.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "an error reached the uncaptured-error handler"
    );
}

/// Two skeletons, `s0` of 3 joints and `s1` of 5, and a clip of each: the same library every
/// call, each call another build of it (with a tag of its own).
fn two_skeletons() -> (wgpu_anim::AnimationLibrary, [SkeletonId; 2], [ClipId; 2]) {
    let mut r = common::rng(7);
    let mut b = wgpu_anim::LibraryBuilder::new();
    let mut make = |k: usize, joints: usize| {
        let s = common::random_skeleton(&mut r, &format!("s{k}"), joints);
        let clip = common::random_clip(&mut r, &s, &format!("c{k}"));
        let id = b.add_skeleton(s);
        (id, b.add_clip(id, &clip).unwrap())
    };
    let (s0, c0) = make(0, 3);
    let (s1, c1) = make(1, 5);
    (b.build(), [s0, s1], [c0, c1])
}

/// An animator of `lib` (culling or not) with an instance of each clip of `clips`, in order.
fn animator_of(device: &wgpu::Device, lib: &wgpu_anim::AnimationLibrary, clips: &[ClipId], culling: bool) -> Animator {
    let desc = AnimatorDesc::default().with_max_instances(8).with_culling(culling);
    let mut a = Animator::new(device, lib, &desc).unwrap();
    for &clip in clips {
        a.controller_mut().add_instance(&InstanceDesc::new(clip)).unwrap();
    }
    a
}

/// A mesh of `triangles` triangles (1 or 2), every vertex on joint 0.
fn triangles(name: &str, triangles: u32) -> SkinnedMesh {
    SkinnedMesh {
        name: name.to_owned(),
        positions: vec![glam::Vec3::ZERO, glam::Vec3::X, glam::Vec3::Y, glam::Vec3::ONE],
        joints: vec![[0; 4]; 4],
        weights: vec![[1.0, 0.0, 0.0, 0.0]; 4],
        indices: [[0, 1, 2], [1, 3, 2]]
            .into_iter()
            .take(triangles as usize)
            .flatten()
            .collect(),
        ..SkinnedMesh::default()
    }
}

/// The WGSL of a user's own pipeline, before the skinning module.
const SKINNED: &str = "
@vertex fn vs(v: wgpu_anim_Vertex, @builtin(instance_index) index: u32) -> @builtin(position) vec4<f32> {
    let s = wgpu_anim_skin(wgpu_anim_PageInstance(index), v.joints, v.weights, v.position, v.normal);
    return vec4<f32>(0.1 * s.position.xy, 0.5, 1.0);
}
@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }
";

/// A user's pipeline skinning with `skin` (at group 1, `layout` its layout), drawing into an
/// [`OffscreenTarget`]'s pass.
fn user_render_pipeline(
    device: &wgpu::Device,
    skin: &SkinBinding,
    layout: &wgpu::BindGroupLayout,
) -> wgpu::RenderPipeline {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("user skinned"),
        source: wgpu::ShaderSource::Wgsl(format!("{SKINNED}\n{}", skin.wgsl()).into()),
    });
    let camera = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &[],
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("user skinned"),
        bind_group_layouts: &[Some(&camera), Some(layout)],
        immediate_size: 0,
    });
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("user skinned"),
        layout: Some(&pipeline_layout),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[Some(wgpu_anim::SkinVertex::LAYOUT)],
        },
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[Some(OffscreenTarget::COLOR_FORMAT.into())],
        }),
        primitive: Default::default(),
        depth_stencil: Some(wgpu_anim::gpu::depth_state(OffscreenTarget::DEPTH_FORMAT)),
        multisample: Default::default(),
        multiview_mask: None,
        cache: None,
    })
}

/// A user's pipeline placing the skinning module as `skin` says, and the bind groups of `a`'s
/// pages for it.
fn user_skinning(
    device: &wgpu::Device,
    skin: &SkinBinding,
    a: &wgpu_anim::Animator,
) -> (wgpu::RenderPipeline, Vec<wgpu::BindGroup>) {
    let layout = skin.bind_group_layout(device).unwrap();
    let pipeline = user_render_pipeline(device, skin, &layout);
    let groups = skin.bind_groups(device, &layout, a, &[]).unwrap();
    (pipeline, groups)
}

/// Records `draw` in a render pass of `target` with `pipeline` set, and submits it in an error
/// scope: what `draw` returns, and whether the device took the commands.
fn record_draw(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    pipeline: &wgpu::RenderPipeline,
    draw: impl FnOnce(&mut wgpu::RenderPass<'_>) -> wgpu_anim::Result<()>,
) -> (wgpu_anim::Result<()>, wgpu_anim::Result<()>) {
    let target = OffscreenTarget::new(device, 8, 8).unwrap();
    let mut encoder = device.create_command_encoder(&Default::default());
    let drawn = {
        let (mut pass, _views) = target.begin_pass(&mut encoder, wgpu::Color::BLACK);
        pass.set_pipeline(pipeline);
        draw(&mut pass)
    };
    let taken = pollster::block_on(wgpu_anim::gpu::scoped(device, "the draw", || {
        queue.submit([encoder.finish()]);
    }));
    (drawn, taken)
}

#[test]
fn encoding_or_drawing_before_the_first_prepare_is_an_error() {
    let (device, queue) = common::device();
    let (lib, skeletons, clips) = two_skeletons();
    let mut a = animator_of(&device, &lib, &[clips[0], clips[0]], false);
    let mesh = MeshBuffers::new(&device, &lib, skeletons[0], &triangles("tri", 1)).unwrap();
    let skin = SkinBinding::default();
    let (pipeline, groups) = user_skinning(&device, &skin, &a);
    let renderer = SkinnedRenderer::new(
        &device,
        &a,
        skeletons[0],
        &triangles("tri", 1),
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
    )
    .unwrap();
    let not_prepared = |e: Error, what: &str| {
        assert!(matches!(&e, Error::NotPrepared { what: w } if w == what), "{e:?}");
        assert!(e.to_string().contains("call Animator::prepare first"), "{e}");
    };

    // Before the first prepare: nothing is on the GPU, and every call says so.
    let mut encoder = device.create_command_encoder(&Default::default());
    not_prepared(a.encode(&mut encoder).unwrap_err(), "Animator::encode");
    not_prepared(
        a.encode_stage(&mut encoder, wgpu_anim::shaders::Stage::Clock)
            .unwrap_err(),
        "Animator::encode_stage of the clock pass",
    );
    let (drawn, taken) = record_draw(&device, &queue, &pipeline, |pass| {
        skin.draw(pass, &groups, &a, &mesh, 0..2)
    });
    not_prepared(drawn.unwrap_err(), "SkinBinding::draw of instances 0..2");
    taken.expect("nothing was recorded");
    let (drawn, _) = record_draw(&device, &queue, &pipeline, |pass| renderer.draw(pass, &a, 0..2));
    not_prepared(drawn.unwrap_err(), "SkinnedRenderer::draw of instances 0..2");
    let (drawn, _) = record_draw(&device, &queue, &pipeline, |pass| renderer.draw_visible(pass, &a));
    not_prepared(drawn.unwrap_err(), "SkinnedRenderer::draw_visible");

    // Prepared: the same calls record, and the device takes what they recorded.
    a.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    a.encode(&mut encoder).unwrap();
    a.encode_stage(&mut encoder, wgpu_anim::shaders::Stage::Clock).unwrap();
    queue.submit([encoder.finish()]);
    let (drawn, taken) = record_draw(&device, &queue, &pipeline, |pass| {
        skin.draw(pass, &groups, &a, &mesh, 0..2)
    });
    drawn.unwrap();
    taken.unwrap();
    let renderer_pipeline = &pipeline; // set first, replaced by the renderer's own
    let (drawn, taken) = record_draw(&device, &queue, renderer_pipeline, |pass| {
        renderer.draw(pass, &a, 0..2)?;
        renderer.draw_visible(pass, &a)
    });
    drawn.unwrap();
    taken.unwrap();
}

/// Instances added after the last prepare are not on the GPU: a draw that names them is an
/// error naming them, the instances prepared still draw, and the next prepare uploads them. An
/// instance added again at an index truncated away is not on the GPU either.
#[test]
fn drawing_instances_added_after_the_last_prepare_is_an_error() {
    let (device, queue) = common::device();
    let (lib, skeletons, clips) = two_skeletons();
    let mut a = animator_of(&device, &lib, &[clips[0], clips[0]], false);
    let mesh = MeshBuffers::new(&device, &lib, skeletons[0], &triangles("tri", 1)).unwrap();
    let skin = SkinBinding::default();
    let (pipeline, groups) = user_skinning(&device, &skin, &a);
    let draw = |a: &wgpu_anim::Animator, instances: std::ops::Range<u32>| {
        let (drawn, taken) = record_draw(&device, &queue, &pipeline, |pass| {
            skin.draw(pass, &groups, a, &mesh, instances.clone())
        });
        taken.expect("the device takes what was recorded");
        drawn
    };
    a.prepare(&queue, 0.0);
    a.controller_mut()
        .add_instance(&wgpu_anim::InstanceDesc::new(clips[0]))
        .unwrap();
    let e = draw(&a, 0..3).unwrap_err();
    assert!(
        matches!(
            &e,
            Error::NotUploaded {
                prepared: 2,
                end: 3,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("instances 2..3 were added after the last Animator::prepare"),
        "{e}"
    );
    // The instances prepared draw; past the animator's instances nothing is named.
    draw(&a, 0..2).unwrap();
    a.prepare(&queue, 0.0);
    draw(&a, 0..3).unwrap();
    draw(&a, 0..10).unwrap();
    // Truncated and added again: the new instance 1 is not on the GPU until the next prepare.
    a.controller_mut().truncate(1);
    a.controller_mut()
        .add_instance(&wgpu_anim::InstanceDesc::new(clips[0]))
        .unwrap();
    assert!(matches!(
        draw(&a, 0..2),
        Err(Error::NotUploaded {
            prepared: 1,
            end: 2,
            ..
        })
    ));
    draw(&a, 0..1).unwrap();
    a.prepare(&queue, 0.0);
    draw(&a, 0..2).unwrap();
}

#[test]
fn a_mesh_draws_only_the_instances_of_its_skeleton() {
    let (device, queue) = common::device();
    let (lib, skeletons, clips) = two_skeletons();
    // Instances 0, 1 and 3 of `s0`, 2 of `s1`.
    let mut a = animator_of(&device, &lib, &[clips[0], clips[0], clips[1], clips[0]], false);
    a.prepare(&queue, 0.0);
    let meshes = skeletons.map(|s| MeshBuffers::new(&device, &lib, s, &triangles("tri", 1)).unwrap());
    assert_eq!(meshes.each_ref().map(MeshBuffers::skeleton), skeletons);
    let skin = SkinBinding::default();
    let (pipeline, groups) = user_skinning(&device, &skin, &a);
    let draw = |a: &Animator, mesh: &MeshBuffers, instances: std::ops::Range<u32>| {
        let (drawn, taken) = record_draw(&device, &queue, &pipeline, |pass| {
            skin.draw(pass, &groups, a, mesh, instances)
        });
        taken.expect("the device takes what was recorded");
        drawn
    };
    // Each mesh draws its skeleton's instances, up to the last instance there is.
    for (mesh, instances) in [(0, 0..2), (0, 3..4), (0, 3..100), (1, 2..3), (0, 2..2)] {
        draw(&a, &meshes[mesh], instances.clone()).unwrap_or_else(|e| panic!("{instances:?}: {e}"));
    }
    // Another skeleton's instances: refused, naming the mesh, both skeletons and the first of them.
    let e = draw(&a, &meshes[0], 0..4).unwrap_err();
    assert_eq!(
        e.to_string(),
        "mesh 'tri' is skinned to skeleton 's0' (0) and cannot draw instance 2, of skeleton 's1' (1)"
    );
    assert!(
        matches!(&e, Error::MeshSkeleton { instance: 2, skeleton, instance_skeleton, .. }
            if skeleton == "'s0' (0)" && instance_skeleton == "'s1' (1)"),
        "{e:?}"
    );
    let e = draw(&a, &meshes[1], 1..4).unwrap_err();
    assert!(matches!(e, Error::MeshSkeleton { instance: 1, .. }), "{e:?}");

    // The built-in renderer refuses them too.
    let renderer = SkinnedRenderer::new(
        &device,
        &a,
        skeletons[1],
        &triangles("tri", 1),
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
    )
    .unwrap();
    let (drawn, taken) = record_draw(&device, &queue, &pipeline, |pass| renderer.draw(pass, &a, 2..3));
    drawn.unwrap();
    taken.unwrap();
    let (drawn, _) = record_draw(&device, &queue, &pipeline, |pass| renderer.draw(pass, &a, 0..4));
    assert!(
        matches!(drawn, Err(Error::MeshSkeleton { instance: 0, .. })),
        "{drawn:?}"
    );
    let (drawn, _) = record_draw(&device, &queue, &pipeline, |pass| renderer.draw_visible(pass, &a));
    assert!(
        matches!(drawn, Err(Error::MeshSkeleton { instance: 0, .. })),
        "{drawn:?}"
    );

    // A mesh of another build of the same library draws the same skeleton's instances; one of
    // another library's skeleton draws none, each skeleton named with its library.
    let (again, again_skeletons, _) = two_skeletons();
    let rebuilt = MeshBuffers::new(&device, &again, again_skeletons[1], &triangles("tri", 1)).unwrap();
    draw(&a, &rebuilt, 2..3).unwrap();
    let e = draw(&a, &rebuilt, 0..3).unwrap_err();
    let (ours, theirs) = (again.tag(), lib.tag());
    assert_eq!(
        e.to_string(),
        format!(
            "mesh 'tri' is skinned to skeleton 's1' (1, {ours}) and cannot draw instance 0, of skeleton 's0' (0, {theirs})"
        )
    );
    let (other, other_skeleton, _) = mannequin::library();
    let mesh = MeshBuffers::new(&device, &other, other_skeleton, &triangles("tri", 1)).unwrap();
    let e = draw(&a, &mesh, 3..4).unwrap_err();
    assert!(matches!(e, Error::MeshSkeleton { instance: 3, .. }), "{e:?}");
    // A skeleton id of another library than the one given: refused before any upload.
    let e = MeshBuffers::new(&device, &lib, other_skeleton, &triangles("tri", 1))
        .err()
        .unwrap();
    assert!(matches!(e, Error::ForeignId(_)), "{e:?}");

    // Without the other skeleton's instance, the mesh draws them all.
    a.controller_mut().truncate(2);
    a.prepare(&queue, 0.0);
    draw(&a, &meshes[0], 0..4).unwrap();
}

#[test]
fn a_culled_draw_of_a_mesh_of_another_skeleton_is_an_error() {
    let (device, queue) = common::device();
    let (lib, skeletons, clips) = two_skeletons();
    let mut a = animator_of(&device, &lib, &[clips[0], clips[1]], true);
    let skin = SkinBinding::default().for_animator(&a);
    assert!(skin.visible);
    let (pipeline, groups) = user_skinning(&device, &skin, &a);
    let mesh = MeshBuffers::new(&device, &lib, skeletons[0], &triangles("tri", 1)).unwrap();
    let draws = CulledDraws::new(&device, &a, &mesh).unwrap();
    let draw = |a: &Animator, mesh: &MeshBuffers, draws: &CulledDraws| {
        let (drawn, taken) = record_draw(&device, &queue, &pipeline, |pass| {
            skin.draw_visible(pass, &groups, a, mesh, draws)
        });
        taken.expect("the device takes what was recorded");
        drawn
    };
    let e = draw(&a, &mesh, &draws).unwrap_err();
    assert!(
        matches!(&e, Error::NotPrepared { what } if what == "SkinBinding::draw_visible"),
        "{e:?}"
    );
    a.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    a.encode(&mut encoder).unwrap();
    draws.encode(&mut encoder, &a);
    queue.submit([encoder.finish()]);
    // Every instance of the animator is drawn: the one of `s1` is refused.
    let e = draw(&a, &mesh, &draws).unwrap_err();
    assert!(
        matches!(&e, Error::MeshSkeleton { instance: 1, instance_skeleton, .. } if instance_skeleton == "'s1' (1)"),
        "{e:?}"
    );
    // Draws made for a mesh of another index count.
    let two = MeshBuffers::new(&device, &lib, skeletons[0], &triangles("two", 2)).unwrap();
    let e = draw(&a, &mesh, &CulledDraws::new(&device, &a, &two).unwrap()).unwrap_err();
    assert!(
        matches!(&e, Error::Binding { .. }) && e.to_string().contains("a mesh of 6 indices, and mesh 'tri' has 3"),
        "{e}"
    );
    a.controller_mut().truncate(1);
    a.prepare(&queue, 0.0);
    draw(&a, &mesh, &draws).unwrap();
}
