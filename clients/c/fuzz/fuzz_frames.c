/*
 * fuzz_frames: libFuzzer over the C SDK's handling of what a server sends (frames after the
 * handshake), with a unary call and a stream in flight. A hostile or broken server must get a broken
 * connection or a failed call, never a crash, a leak or a read out of bounds.
 *
 *   make -C clients/c fuzz            # builds build/fuzz-frames with clang, ASan and UBSan
 *   mkdir -p clients/c/build/corpus   # new inputs go there; fuzz/corpus holds the seeds
 *   clients/c/build/fuzz-frames -max_total_time=60 clients/c/build/corpus clients/c/fuzz/corpus
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

void homerpc_fuzz_frames(const uint8_t *data, size_t size, int peer);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* A fresh pair each time: a broken connection shuts its end down. The client's end is the
     * client's to close; ours takes (and drops) what it answers. */
    int sockets[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sockets) != 0) abort();
    homerpc_fuzz_frames(data, size, sockets[0]);
    close(sockets[1]);
    return 0;
}
