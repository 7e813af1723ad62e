//! The clock's tick arithmetic on the GPU against its CPU mirror, function by function: WGSL
//! `ratio_ticks` (rate · dt / length in ticks, a long division byte by byte in 32-bit integers)
//! equals `cpu::ratio_ticks` (one exact 128-bit division) bit for bit, over random values of every
//! magnitude, over the ends of the divisor's range and products a hair from a multiple of it, and
//! over what is not a number.

mod common;

use common::{device, rng};
use rand::Rng;
use wgpu::util::DeviceExt;
use wgpu_anim::{cpu, shaders};

const HARNESS: &str = "
#import wgpu_anim::ticks::ratio_ticks

@group(0) @binding(0) var<storage, read> inputs: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> outputs: array<vec2<u32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&inputs)) {
        let v = inputs[id.x];
        outputs[id.x] = ratio_ticks(v.x, v.y, v.z);
    }
}
";

/// `ratio_ticks(rate, dt, per)` of each triple, on the GPU, as i64.
fn gpu_ratio_ticks(device: &wgpu::Device, queue: &wgpu::Queue, triples: &[[f32; 3]]) -> Vec<i64> {
    let wgsl = shaders::compose_with_shared(HARNESS, "ticks_harness").unwrap_or_else(|e| panic!("{e}"));
    let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("ticks harness"),
        source: wgpu::ShaderSource::Wgsl(wgsl.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("ticks harness"),
        layout: None,
        module: &shader,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let data: Vec<[f32; 4]> = triples.iter().map(|t| [t[0], t[1], t[2], 0.0]).collect();
    let inputs = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("ticks inputs"),
        contents: bytemuck::cast_slice(&data),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let outputs = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("ticks outputs"),
        size: 8 * triples.len() as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("ticks harness"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: inputs.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: outputs.as_entire_binding(),
            },
        ],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind, &[]);
        pass.dispatch_workgroups((triples.len() as u32).div_ceil(64), 1, 1);
    }
    queue.submit([encoder.finish()]);
    let words: Vec<[u32; 2]> =
        wgpu_anim::gpu::read_buffer(device, queue, &outputs, 0, triples.len() as u64).unwrap_or_else(|e| panic!("{e}"));
    words
        .iter()
        .map(|w| (u64::from(w[0]) | (u64::from(w[1]) << 32)) as i64)
        .collect()
}

/// An f32 with this 24-bit mantissa (the top bit set) and a power of two.
fn with_mantissa(m: u32, exponent: i32) -> f32 {
    m as f32 * 2f32.powi(exponent - 23)
}

#[test]
fn ratio_ticks_on_the_gpu_equals_the_exact_division() {
    let (device, queue) = device();
    let mut r = rng(67);
    let mut triples: Vec<[f32; 3]> = Vec::new();
    // Every magnitude a clock meets and beyond: rates, frame lengths and lengths from subnormal
    // to huge, either sign.
    let magnitude = |r: &mut rand::rngs::SmallRng| {
        let sign = if r.gen_bool(0.5) { -1.0 } else { 1.0 };
        sign * 2f32.powf(r.gen_range(-140.0..100.0))
    };
    for _ in 0..40_000 {
        triples.push([magnitude(&mut r), magnitude(&mut r), magnitude(&mut r).abs()]);
    }
    // The usual: rates near 1, frames of a few ms, lengths of a clip.
    for _ in 0..40_000 {
        triples.push([r.gen_range(-3.0..3.0), r.gen_range(1e-4..0.1), r.gen_range(0.01..60.0)]);
    }
    // Divisors at the ends of their range (mantissas 2^23 and 2^24 - 1) and products m_r · m_d
    // a hair from a multiple of the divisor's mantissa, where a quotient rounds either way.
    for _ in 0..40_000 {
        let mp = match r.gen_range(0..3) {
            0 => 1 << 23,
            1 => (1 << 24) - 1,
            _ => r.gen_range(1 << 23..1 << 24),
        };
        let mr: u32 = r.gen_range(1 << 23..1 << 24);
        let k = u64::from(r.gen_range(1u32..1 << 24));
        let target = u64::from(mp) * k + r.gen_range(0..3);
        let md = (target / u64::from(mr)).clamp(1 << 23, (1 << 24) - 1) as u32;
        triples.push([with_mantissa(mr, 0), with_mantissa(md, -10), with_mantissa(mp, 3)]);
    }
    // What is not a number, zero, infinite.
    triples.extend([
        [f32::NAN, 1.0, 1.0],
        [1.0, f32::INFINITY, 1.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 1.0],
        [f32::MAX, f32::MAX, f32::MIN_POSITIVE],
    ]);
    let got = gpu_ratio_ticks(&device, &queue, &triples);
    let want: Vec<i64> = triples.iter().map(|t| cpu::ratio_ticks(t[0], t[1], t[2])).collect();
    let differ: Vec<String> = triples
        .iter()
        .zip(got.iter().zip(&want))
        .filter(|(_, (g, w))| g != w)
        .take(10)
        .map(|(t, (g, w))| format!("ratio_ticks({:e}, {:e}, {:e}): GPU {g}, CPU {w}", t[0], t[1], t[2]))
        .collect();
    assert!(differ.is_empty(), "{} triples:\n{}", triples.len(), differ.join("\n"));
    // The comparison sees a quotient one tick off.
    let off: Vec<i64> = want.iter().map(|w| w + 1).collect();
    assert!(got.iter().zip(&off).all(|(g, o)| g != o));
}
