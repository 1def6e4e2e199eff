#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ctxkit_fuzz::opencode_import(data));
