//! A crowd driven from several threads: which types cross threads, and a job system editing
//! instances while one thread encodes, giving the same palettes as one thread doing it all.

mod common;

use std::sync::{Arc, Barrier, Mutex};
use wgpu_anim::gpu::{Controller, GpuLibrary, Transition};
use wgpu_anim::{AnimationLibrary, Animator, AnimatorDesc, InstanceDesc, LibraryBuilder, SkinnedRenderer, mannequin};

/// Every type a game keeps in its world or hands to a job: `Send` (moves to another thread) and
/// `Sync` (shared by reference). Fails to compile if one stops being so.
#[test]
fn the_runtime_types_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<AnimationLibrary>();
    send_sync::<LibraryBuilder>();
    send_sync::<GpuLibrary>();
    send_sync::<Controller>();
    send_sync::<Animator>();
    send_sync::<SkinnedRenderer>();
    send_sync::<wgpu_anim::Error>();
}

const CHARACTERS: usize = 512;
const WORKERS: usize = 4;
const FRAMES: usize = 12;

/// The edit job `worker` makes in `frame` for the characters it owns (every `WORKERS`-th): a
/// new rate, new blend parameters, a cross-fade to another clip, or a seek, depending on the
/// character and the frame.
fn edit(animator: &mut Animator, clips: &[wgpu_anim::ClipId], worker: usize, frame: usize) {
    for i in (worker..CHARACTERS).step_by(WORKERS) {
        let k = i + frame * 7;
        match k % 5 {
            0 => animator
                .controller_mut()
                .set_rate(i, 0.5 + (k % 11) as f32 * 0.1)
                .unwrap(),
            1 => animator.controller_mut().set_time(i, (k % 13) as f32 * 0.07).unwrap(),
            2 => {
                let next = InstanceDesc::new(clips[k % clips.len()]);
                animator
                    .controller_mut()
                    .play(i, &next, Some(Transition::linear(0.2)))
                    .unwrap();
            }
            _ => {}
        }
    }
}

fn crowd(device: &wgpu::Device, library: &AnimationLibrary, clips: &[wgpu_anim::ClipId]) -> Animator {
    let desc = AnimatorDesc::default()
        .with_max_instances(CHARACTERS as u32)
        // Several pages, so that the jobs' edits land in different buffers.
        .with_page_instances(Some(100));
    let mut a = Animator::new(device, library, &desc).unwrap();
    for i in 0..CHARACTERS {
        let desc = InstanceDesc::new(clips[i % clips.len()]).with_time(i as f32 * 0.013);
        a.controller_mut().add_instance(&desc).unwrap();
    }
    a
}

fn frame(device: &wgpu::Device, queue: &wgpu::Queue, animator: &mut Animator) {
    animator.prepare(queue, 1.0 / 30.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder).unwrap();
    queue.submit([encoder.finish()]);
}

fn palettes(device: &wgpu::Device, queue: &wgpu::Queue, animator: &Animator) -> Vec<wgpu_anim::Affine> {
    (0..animator.controller().pages_in_use())
        .flat_map(|p| animator.read_back_page(device, queue, p).unwrap().1.palette)
        .collect()
}

/// Four worker threads edit their own characters each frame (through a mutex, the way a job
/// system hands out the animator) while the main thread waits at a barrier, then prepares,
/// encodes and submits the frame. The same edits on one thread, in the same frames, give the
/// same palettes bit for bit: the edits of different jobs commute.
#[test]
fn jobs_edit_while_one_thread_encodes() {
    let (device, queue) = common::device();
    let (library, _, clips) = mannequin::library();
    let mut alone = crowd(&device, &library, &clips);
    for f in 0..FRAMES {
        for w in 0..WORKERS {
            edit(&mut alone, &clips, w, f);
        }
        frame(&device, &queue, &mut alone);
    }
    let want = palettes(&device, &queue, &alone);

    let shared = Arc::new(Mutex::new(crowd(&device, &library, &clips)));
    let edited = Barrier::new(WORKERS + 1);
    let encoded = Barrier::new(WORKERS + 1);
    std::thread::scope(|s| {
        for w in 0..WORKERS {
            let (shared, clips, edited, encoded) = (&shared, &clips, &edited, &encoded);
            s.spawn(move || {
                for f in 0..FRAMES {
                    edit(&mut shared.lock().unwrap(), clips, w, f);
                    edited.wait();
                    encoded.wait();
                }
            });
        }
        for _ in 0..FRAMES {
            edited.wait();
            frame(&device, &queue, &mut shared.lock().unwrap());
            encoded.wait();
        }
    });
    let got = palettes(&device, &queue, &shared.lock().unwrap());
    assert_eq!(got.len(), want.len());
    let differing = got.iter().zip(&want).filter(|(g, w)| g != w).count();
    assert_eq!(
        differing, 0,
        "{differing} palette entries differ from the one-thread run"
    );
    // The comparison can fail: one edit fewer changes the palettes.
    let mut short = crowd(&device, &library, &clips);
    for f in 0..FRAMES {
        for w in 0..WORKERS - usize::from(f == FRAMES - 1) {
            edit(&mut short, &clips, w, f);
        }
        frame(&device, &queue, &mut short);
    }
    assert_ne!(palettes(&device, &queue, &short), want, "a missing job went unnoticed");
}

/// The animator moves to another thread and carries on there; the library upload is shared
/// by animators on two threads.
#[test]
fn an_animator_moves_between_threads() {
    let (device, queue) = common::device();
    let (library, _, clips) = mannequin::library();
    let gpu = GpuLibrary::new(&device, &library).unwrap();
    let make = || {
        let mut a = Animator::with_library(&device, gpu.clone(), &AnimatorDesc::default()).unwrap();
        a.controller_mut().add_instance(&InstanceDesc::new(clips[1])).unwrap();
        a
    };
    let (mut here, there) = (make(), make());
    let there = std::thread::scope(|s| {
        s.spawn(|| {
            let mut there = there;
            for _ in 0..3 {
                frame(&device, &queue, &mut there);
            }
            there
        })
        .join()
        .unwrap()
    });
    for _ in 0..3 {
        frame(&device, &queue, &mut here);
    }
    assert_eq!(palettes(&device, &queue, &here), palettes(&device, &queue, &there));
}
