#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ctxkit_fuzz::theme_colors_target(data));
