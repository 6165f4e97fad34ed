// The reference for homed's gRPC door: gRPC C++ (Debian's libgrpc++) serving the same unary method,
// home.v1.Health/Check, from one completion queue polled by one thread (the async API), as homed
// serves from one event loop. Answers SERVING to every check. Bench only: never part of the product.
//
//   health-server PORT
#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "home/v1/health.grpc.pb.h"

using home::v1::Health;
using home::v1::HealthCheckRequest;
using home::v1::HealthCheckResponse;

namespace {

// One call in flight: waits for a request, answers it, then makes the next such call.
class Call {
  public:
    Call(Health::AsyncService *service, grpc::ServerCompletionQueue *queue)
        : service_(service), queue_(queue), responder_(&context_) {
        service_->RequestCheck(&context_, &request_, &responder_, queue_, queue_, this);
    }

    void Proceed(bool ok) {
        if (answered_ || !ok) {
            delete this;
            return;
        }
        new Call(service_, queue_);
        HealthCheckResponse response;
        response.set_status(HealthCheckResponse::SERVING_STATUS_SERVING);
        answered_ = true;
        responder_.Finish(response, grpc::Status::OK, this);
    }

  private:
    Health::AsyncService *service_;
    grpc::ServerCompletionQueue *queue_;
    grpc::ServerContext context_;
    HealthCheckRequest request_;
    grpc::ServerAsyncResponseWriter<HealthCheckResponse> responder_;
    bool answered_ = false;
};

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: health-server PORT\n");
        return 64;
    }
    Health::AsyncService service;
    grpc::ServerBuilder builder;
    builder.AddListeningPort(std::string("127.0.0.1:") + argv[1], grpc::InsecureServerCredentials());
    builder.RegisterService(&service);
    // One completion queue, polled by this thread only.
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
    std::unique_ptr<grpc::ServerCompletionQueue> queue = builder.AddCompletionQueue();
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    if (!server) return 1;
    // Enough calls waiting for requests that 50 connections × 16 in flight never wait for one.
    for (int i = 0; i < 1024; i++) new Call(&service, queue.get());
    std::printf("ready\n");
    std::fflush(stdout);
    void *tag;
    bool ok;
    while (queue->Next(&tag, &ok)) static_cast<Call *>(tag)->Proceed(ok);
    return 0;
}
