//! Bad input gets a clear error naming what and where, and leaves the target unchanged.

mod common;

use glam::Mat4;
use wgpu_anim::{Animator, AnimatorDesc, ClipId, Error, InstanceDesc, LoopMode, SkinnedMesh, mannequin};

fn animator(max: u32) -> (wgpu::Device, wgpu::Queue, Animator) {
    let (device, queue) = common::device();
    let (lib, _, _) = mannequin::library();
    let a = Animator::new(
        &device,
        &lib,
        &AnimatorDesc {
            max_instances: max,
            max_joints: None,
            page_instances: None,
            dual_quaternion: false,
            morph_weights: 0,
            ground: None,
            inertialization: false,
            layers: true,
            culling: false,
            lod_interpolation: false,
            hierarchy_walk: wgpu_anim::gpu::HierarchyWalk::Auto,
            character_threads: wgpu_anim::gpu::CharacterThreads::Auto,
        },
    )
    .unwrap();
    (device, queue, a)
}

#[test]
fn bad_instances_are_rejected_with_their_index() {
    let (_d, _q, mut a) = animator(4);
    let clips: Vec<ClipId> = (0..2).map(|k| a.library().clip_at(k).unwrap()).collect();
    a.add_instance(&InstanceDesc::new(clips[0])).unwrap();
    // A clip of another library: refused, naming it.
    let other = mannequin::library().2[1];
    let e = a.add_instance(&InstanceDesc::new(other)).unwrap_err();
    assert!(matches!(e, Error::ForeignId(_)), "{e:?}");
    assert!(e.to_string().starts_with("clip 1 belongs to another library"), "{e}");
    let cases: Vec<(InstanceDesc, &str)> = vec![
        (
            InstanceDesc {
                time: f32::NAN,
                ..InstanceDesc::new(clips[1])
            },
            "finite",
        ),
        (
            InstanceDesc {
                rate: f32::INFINITY,
                ..InstanceDesc::new(clips[1])
            },
            "finite",
        ),
        (
            InstanceDesc {
                loop_mode: LoopMode::Repeat(0),
                ..InstanceDesc::new(clips[1])
            },
            "at least one loop",
        ),
        (
            InstanceDesc {
                world: Mat4::from_cols_array(&[0.0; 16]),
                ..InstanceDesc::new(clips[1])
            },
            "affine",
        ),
    ];
    for (desc, expect) in cases {
        let e = a.add_instance(&desc).unwrap_err();
        assert!(matches!(e, Error::Instance { instance: 1, .. }), "{e:?}");
        assert!(e.to_string().contains(expect), "{e}");
    }
    assert_eq!(a.instance_count(), 1, "nothing was added");
    assert!(
        a.set_instance(7, &InstanceDesc::new(clips[0]))
            .unwrap_err()
            .to_string()
            .contains("instance 7")
    );
    assert!(a.set_time(0, f32::NAN).is_err());
    assert!(a.set_world(3, Mat4::IDENTITY).is_err());
}

#[test]
fn capacity_limits_are_errors_not_panics() {
    let (device, _q, mut a) = animator(2);
    let clip = a.library().clip_at(0).unwrap();
    a.add_instance(&InstanceDesc::new(clip)).unwrap();
    a.add_instance(&InstanceDesc::new(clip)).unwrap();
    let e = a.add_instance(&InstanceDesc::new(clip)).unwrap_err();
    assert!(
        matches!(e, Error::Limit { .. }) && e.to_string().contains("at most 2"),
        "{e}"
    );
    let (lib, _, _) = mannequin::library();
    // More joints than a u32 counts, and pages of no instance, are errors before any allocation.
    for (desc, says) in [
        (
            AnimatorDesc {
                max_instances: 100_000_000,
                ..AnimatorDesc::default()
            },
            "overflow a u32",
        ),
        (
            AnimatorDesc {
                page_instances: Some(0),
                ..AnimatorDesc::default()
            },
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
    let (lib, _, _) = mannequin::library();
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
    let e = wgpu_anim::SkinnedRenderer::new(
        &device,
        &a,
        &mesh,
        mannequin::skeleton().joint_count(),
        wgpu::TextureFormat::Rgba8Unorm,
        None,
        1,
    )
    .err()
    .expect("5 vertex attributes on a device that reads 4");
    assert!(e.to_string().contains("the renderer of mesh"), "{e}");

    // A skinning binding past the device's maximum (and past u32::MAX for its last entry).
    let binding = wgpu_anim::gpu::SkinBinding {
        group: 0,
        palette: u32::MAX - 1,
        previous: true,
        dual_quaternion: true,
        rigid: false,
        morph: false,
        visible: false,
        vat: false,
        location: 0,
    };
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
