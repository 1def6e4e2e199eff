//! A third developed batch, written after the 4th held-out set's first run showed its faults, to
//! show the same shapes on another stack: an embedded C project built with make, whose earlier
//! summary (a model's) has placeholder items and planned steps the span carries out, whose test
//! runner reports zero failures, whose compiler error sits under make's banner, and whose
//! benchmark prints a spread beside its mean.

use ctxkit_compaction::SummaryPurpose;

use super::{Case, SessionBuilder, fact};

pub(super) fn cases() -> Vec<Case> {
    vec![firmware_update()]
}

fn firmware_update() -> Case {
    let previous = "## Goal\nFix the CRC-16 check of the bootloader in `src/boot/crc16.c` (it rejected images whose length is odd) and release 0.9.3.\n\n## Constraints\n- No dynamic allocation anywhere in `src/`\n- Keep the bootloader under 16 KiB (`make size` prints it)\n\n## Progress\n### Done\n- [x] Fixed the odd-length tail in `crc16_update`; the Unity tests pass (31 tests)\n\n### Blocked\n- None\n- —\n\n## Next Steps\n1. CHANGELOG entry for 0.9.3\n2. Open the pull request for the CRC fix\n3. Then the UART DMA receive timeout the user reported\n\n## Critical Context\n- Branch: `fix/crc-odd-length`\n- Target board: STM32G0 (Cortex-M0+)";
    let messages = SessionBuilder::new()
        .user("continue")
        .edit("CHANGELOG.md", "## Unreleased", "## 0.9.3\n\n- Bootloader: the CRC-16 check accepts images of odd length")
        .bash("git commit -am \"CHANGELOG entry for 0.9.3\" && git push -u origin fix/crc-odd-length", "[fix/crc-odd-length 7c2e9f14] CHANGELOG entry for 0.9.3\n 1 file changed, 4 insertions(+)\nbranch 'fix/crc-odd-length' set up to track 'origin/fix/crc-odd-length'.")
        .bash("gh pr create --fill --base main", "https://github.com/acme/fw-sensor/pull/233")
        .assistant("CHANGELOG has the 0.9.3 entry (commit 7c2e9f14) and the CRC fix is up as PR #233.")
        .user("good. now the UART DMA thing: when the host stops sending mid-frame, uart_dma_receive() waits forever. Give it a timeout of 50 ms, configurable in board.h, and return UART_ERR_TIMEOUT.")
        .read("src/drivers/uart_dma.c", "int uart_dma_receive(uint8_t *buf, size_t len) {\n  while (!dma_done(UART_RX_CH)) {}\n  return UART_OK;\n}")
        .edit("src/drivers/uart_dma.c", "  while (!dma_done(UART_RX_CH)) {}", "  uint32_t start = systick_ms();\n  while (!dma_done(UART_RX_CH)) {\n    if (systick_ms() - start > UART_RX_TIMEOUT_MS) return UART_ERR_TIMEOUT;\n  }")
        .bash("make -j2", "arm-none-eabi-gcc -c -mcpu=cortex-m0plus -Os -Iinclude src/drivers/uart_dma.c -o build/uart_dma.o\nsrc/drivers/uart_dma.c:88:47: error: 'UART_RX_TIMEOUT_MS' undeclared (first use in this function)\n   88 |     if (systick_ms() - start > UART_RX_TIMEOUT_MS) return UART_ERR_TIMEOUT;\n      |                                ^~~~~~~~~~~~~~~~~~\nmake: *** [Makefile:41: build/uart_dma.o] Error 1\n\nCommand exited with code 2")
        .edit("include/board.h", "#define UART_BAUD 115200", "#define UART_BAUD 115200\n#define UART_RX_TIMEOUT_MS 50")
        .bash("make -j2 && make size", "arm-none-eabi-gcc -c -mcpu=cortex-m0plus -Os -Iinclude src/drivers/uart_dma.c -o build/uart_dma.o\narm-none-eabi-gcc -o build/boot.elf build/*.o\n   text    data     bss     dec     hex filename\n  15872     112    2048   18032    4670 build/boot.elf")
        .write("test/test_uart_dma.c", "void test_receive_times_out_when_the_host_stops(void) {\n  fake_dma_never_done();\n  TEST_ASSERT_EQUAL(UART_ERR_TIMEOUT, uart_dma_receive(buf, 8));\n}\n")
        .bash("make test", "test/test_crc16.c:31 tests\ntest/test_uart_dma.c:1 test\n\n-----------------------\n32 Tests 0 Failures 0 Ignored\nOK")
        .bash("python3 tools/bench_rx.py --frames 1000 --repeat 5", "rx_latency_mean 184.2 us\nrx_latency_stddev 3.9 us\nrx_latency_cv 2.1 %")
        .assistant("`uart_dma_receive()` now gives up after `UART_RX_TIMEOUT_MS` (50 ms, in `include/board.h`) with `UART_ERR_TIMEOUT`; the new test passes with the other 31, the bootloader is 15872 bytes of text, and the receive latency is unchanged at about 184 µs.")
        .user("ok. open a PR for this one too, against main")
        .build();
    Case {
        name: "firmware update, model-written earlier summary (developed, third batch)",
        messages,
        previous: Some(previous.to_owned()),
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: false,
        facts: vec![
            fact("earlier goal: CRC-16 for odd lengths", &["CRC-16", "crc16"]),
            fact(
                "earlier constraint: no dynamic allocation",
                &["dynamic allocation"],
            ),
            fact("earlier constraint: bootloader under 16 KiB", &["16 KiB"]),
            fact("release version", &["0.9.3"]),
            fact("PR opened", &["#233", "pull/233"]),
            fact("board", &["STM32G0"]),
            fact("branch", &["fix/crc-odd-length"]),
            fact("changelog file", &["CHANGELOG.md"]),
            fact("test command", &["make test"]),
            fact("timeout constant", &["UART_RX_TIMEOUT_MS"]),
            fact("timeout value", &["50 ms"]),
            fact("error code", &["UART_ERR_TIMEOUT"]),
            fact("first build error: constant undeclared", &["undeclared"]),
            fact("test file", &["test/test_uart_dma.c"]),
            fact("receive latency", &["184.2 us", "184 µs"]),
            fact("latest: PR for the timeout", &["open a PR for this one"]),
        ],
    }
}
